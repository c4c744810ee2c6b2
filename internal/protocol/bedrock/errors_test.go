package bedrock

import (
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// Bedrock's exception names, from the x-amzn-ErrorType header (with its
// URL suffix) or the body's __type (with its namespace), decide the status
// and kind; an unknown name keeps the answer's status.
func TestErrorsMapByExceptionName(t *testing.T) {
	cases := []struct {
		status  int
		header  string
		body    string
		want    int
		kind    ir.Kind
		retry   ir.RetryClass
		message string
	}{
		{429, "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/", `{"message":"Too many requests, please wait before trying again."}`, 429, ir.KindRateLimit, ir.RetryNext, "Too many requests, please wait before trying again."},
		{400, "", `{"__type":"com.amazon.coral.validate#ValidationException","message":"The model returned the following errors: bad"}`, 400, ir.KindInvalidRequest, ir.RetryNever, "The model returned the following errors: bad"},
		{403, "AccessDeniedException", `{"Message":"You don't have access to the model with the specified model ID."}`, 403, ir.KindPermission, ir.RetryNextAndCool, "You don't have access to the model with the specified model ID."},
		{403, "UnrecognizedClientException", `{"message":"The security token included in the request is invalid."}`, 401, ir.KindAuthentication, ir.RetryNextAndCool, "Amazon Bedrock refused the channel's credentials (UnrecognizedClientException)"},
		{404, "ResourceNotFoundException", `{"message":"Model not found"}`, 404, ir.KindNotFound, ir.RetryNever, "Model not found"},
		{429, "ModelNotReadyException", `{}`, 503, ir.KindOverloaded, ir.RetryNext, "Amazon Bedrock answered ModelNotReadyException"},
		{503, "ServiceUnavailableException", `{"message":"Bedrock is unable to process your request."}`, 503, ir.KindOverloaded, ir.RetryNext, "Bedrock is unable to process your request."},
		{408, "ModelTimeoutException", `{"message":"timed out"}`, 504, ir.KindTimeout, ir.RetryNext, "timed out"},
		{500, "InternalServerException", `{"message":"internal"}`, 500, ir.KindUpstream, ir.RetryNext, "internal"},
		{418, "", `not json`, 418, ir.KindInvalidRequest, ir.RetryNever, "upstream error: I'm a teapot"},
	}
	for _, tc := range cases {
		e := ErrorOf(tc.status, tc.header, []byte(tc.body))
		if e.Status != tc.want || e.Kind != tc.kind || e.Retry != tc.retry || e.Message != tc.message {
			t.Errorf("%s %s → %d %s retry %d %q", tc.header, tc.body, e.Status, e.Kind, e.Retry, e.Message)
		}
	}
}

// A signature refusal's AWS message quotes the canonical request, which
// holds the session token: it must never reach a client or a log.
func TestSignatureRefusalsNeverRepeatTheMessage(t *testing.T) {
	body := `{"message":"The request signature we calculated does not match. The Canonical String for this request should have been 'POST\n/model/m/converse\n\nx-amz-security-token:SECRET-SESSION-TOKEN\n'"}`
	e := ErrorOf(403, "InvalidSignatureException", []byte(body))
	if strings.Contains(e.Error(), "SECRET") || e.Status != 403 || e.Kind != ir.KindAuthentication {
		t.Fatalf("got %v", e)
	}
	// Read by its body alone (the channel test reads answers so), the
	// message is still recognised and withheld.
	if e := Converse.DecodeError(403, []byte(body)); strings.Contains(e.Error(), "SECRET") {
		t.Fatalf("got %v", e)
	}
}

func TestExceptionFramesMapLikeAnswers(t *testing.T) {
	e := Exception("modelStreamErrorException", []byte(`{"message":"model failed","originalStatusCode":500}`))
	if e.Status != 502 || e.Retry != ir.RetryNext || e.Message != "model failed" {
		t.Fatalf("got %+v", e)
	}
	e = Exception("ThrottlingException", []byte(`garbage`))
	if e.Status != 429 {
		t.Fatalf("got %+v", e)
	}
}

func TestLongMessagesAreCut(t *testing.T) {
	e := ErrorOf(400, "ValidationException", []byte(`{"message":"`+strings.Repeat("é", 400)+`"}`))
	if len(e.Message) > maxErrorMessage+len("…") {
		t.Fatalf("message of %d bytes", len(e.Message))
	}
}
