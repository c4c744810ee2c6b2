package loadtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
)

// loadTokenizer counts one prompt through the gateway's
// /v1/messages/count_tokens, which an OpenAI channel cannot count, so the
// gateway counts it and loads its tokenizer tables: every phase after it
// then shows the memory of a gateway that has ever counted a token (any
// client that ever left a stream early, or asked for a count), as the
// RSS target is stated.
func loadTokenizer(ctx context.Context, gatewayURL string) error {
	body := []byte(`{"model":"` + BenchModel + `","max_tokens":16,"messages":[{"role":"user","content":"How many tokens is this?"}]}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, gatewayURL+"/v1/messages/count_tokens", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+BenchKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(`"input_tokens"`)) {
		return fmt.Errorf("count_tokens to load the tokenizer: %d %s", resp.StatusCode, out)
	}
	return nil
}
