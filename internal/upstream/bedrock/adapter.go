// Package bedrock is the adapter of Amazon Bedrock channels (type aws, 33):
// chat through the Bedrock Runtime's Converse and ConverseStream APIs,
// authenticated with AWS Signature Version 4 (service "bedrock") from an
// ACCESS_KEY_ID|SECRET_ACCESS_KEY key, or with a Bedrock API key sent as
// a Bearer token; streams in AWS event-stream framing; errors by their
// exception names; the model list from the control plane.
package bedrock

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	converse "github.com/turnpike-gw/turnpike/internal/protocol/bedrock"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// Adapter reaches Amazon Bedrock.
type Adapter struct {
	// Now is the signing clock; nil is time.Now. Tests pin it.
	Now func() time.Time
}

var (
	_ upstream.Adapter      = Adapter{}
	_ upstream.Framer       = Adapter{}
	_ upstream.ErrorDecoder = Adapter{}
	_ upstream.Validator    = Adapter{}
	_ upstream.ModelLister  = Adapter{}
)

// Service is the SigV4 service name of the runtime and the control plane.
const Service = "bedrock"

// regionPattern is an AWS region name (us-east-1, us-gov-west-1,
// ap-southeast-2). It goes into a host name, so nothing else may pass.
var regionPattern = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)

// errNoRegion is a channel saved before settings.region was required, or
// edited around the check: its requests cannot be addressed or signed.
var errNoRegion = errors.New("the channel has no valid settings.region")

// Codec is the Converse wire for every model.
func (Adapter) Codec(upstream.Target) protocol.UpstreamCodec { return converse.Converse }

// Chat posts to /model/{modelId}/converse, or /converse-stream for a
// stream, signed for the channel's region.
func (a Adapter) Chat(ctx context.Context, t upstream.Target, body []byte, stream bool, _ http.Header) (*http.Request, error) {
	region := t.Setting("region")
	if !regionPattern.MatchString(region) {
		return nil, errNoRegion
	}
	action := "/converse"
	if stream {
		action = "/converse-stream"
	}
	u := RuntimeBase(t, region) + t.PathPrefix("") + "/model/" + EscapeModel(t.Model) + action
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if !stream {
		// The stream's answer type is fixed (application/vnd.amazon.eventstream);
		// the AWS SDKs send no Accept for it.
		req.Header.Set("Accept", "application/json")
	}
	upstream.ApplyHeaders(req, t)
	if err := a.authorize(ctx, req, t, region, body); err != nil {
		return nil, err
	}
	return req, nil
}

// RuntimeBase is the Bedrock Runtime's origin: base_url, or the region's
// public endpoint.
func RuntimeBase(t upstream.Target, region string) string {
	return t.Base("https://bedrock-runtime." + region + ".amazonaws.com")
}

// EscapeModel escapes a model id (or an inference profile ARN) for the
// path as the AWS SDKs do: everything but unreserved characters, so the
// ':' of a version and the '/' of an ARN become %3A and %2F. The signature
// covers the escaped path, escaped once more.
func EscapeModel(model string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(model); i++ {
		c := model[i]
		if c == '-' || c == '_' || c == '.' || c == '~' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// authorize signs req with SigV4 when the key is ACCESS_KEY_ID|SECRET,
// else sends the key as a Bedrock API key. It runs last, after every
// header is set: the signature covers them.
func (a Adapter) authorize(ctx context.Context, req *http.Request, t upstream.Target, region string, body []byte) error {
	key := strings.TrimSpace(t.Key)
	access, secret, ok := strings.Cut(key, "|")
	if !ok {
		req.Header.Set("Authorization", "Bearer "+key)
		return nil
	}
	creds := aws.Credentials{
		AccessKeyID:     strings.TrimSpace(access),
		SecretAccessKey: strings.TrimSpace(secret),
		SessionToken:    strings.TrimSpace(t.Setting("session_token")),
	}
	sum := sha256.Sum256(body)
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	// A signer per request: the SDK's signer caches the derived signing
	// key by region and access key id only, not the secret, so a shared
	// one would go on signing with a corrected (or another channel's)
	// secret's key until the day changes. Deriving costs four HMACs.
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), Service, region, now()); err != nil {
		return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "bad_channel",
			Message: "the channel's AWS credentials could not sign the request", Retry: ir.RetryNext}
	}
	return nil
}

// StreamEvents reads ConverseStream's AWS event-stream frames.
func (Adapter) StreamEvents(body io.Reader) protocol.EventReader {
	return NewEventReader(body)
}

// DecodeError reads an error answer by its x-amzn-ErrorType header or the
// body's __type.
func (Adapter) DecodeError(status int, h http.Header, body []byte) *ir.Error {
	return converse.ErrorOf(status, h.Get("X-Amzn-Errortype"), body)
}
