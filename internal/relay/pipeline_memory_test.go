package relay

import "testing"

func TestAStartedChatAnswerNoLongerHoldsTheClientBody(t *testing.T) {
	c := &call{raw: []byte(`{"model":"m","messages":[{"role":"user","content":"a long prompt"}],"stream":true}`)}
	var host streamHost = c
	host.answerStarted()
	if !c.wrote {
		t.Error("the call does not know its answer started, so it could try another channel")
	}
	if c.raw != nil {
		t.Errorf("the call still holds the %d-byte client body for the rest of the stream", len(c.raw))
	}
}
