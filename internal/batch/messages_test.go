package batch

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestAMessageBatchBecomesOneInputLinePerRequest(t *testing.T) {
	body := `{"requests": [
  {"custom_id": "a",
   "params": {"model": "m", "max_tokens": 5,
      "messages": [{"role": "user", "content": "line\nbreak \"quoted\""}]}},
  {"params": {"model": "m"}}
]}`
	input, err := messageLines([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(input)
	var lines []map[string]any
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	first := lines[0]
	msg := first["body"].(map[string]any)["messages"].([]any)[0].(map[string]any)
	if first["custom_id"] != "a" || first["method"] != "POST" || first["url"] != "/v1/messages" || msg["content"] != "line\nbreak \"quoted\"" {
		t.Fatalf("first line %v", first)
	}
	if _, ok := lines[1]["custom_id"]; !ok || lines[1]["custom_id"] != nil {
		t.Fatalf("a request without custom_id: %v (the line check names it)", lines[1])
	}
}

func TestAMessageBatchThatIsNotABatchIsRefused(t *testing.T) {
	many := `{"requests":[` + strings.Repeat(`{"custom_id":"x","params":{}},`, maxMessageRequests) + `{"custom_id":"y","params":{}}]}`
	for name, body := range map[string]string{
		"not JSON":                   `{"requests":[{"custom_id":"a","params":{}}]`,
		"no requests":                `{}`,
		"requests not an array":      `{"requests":{"custom_id":"a"}}`,
		"an empty array":             `{"requests":[]}`,
		"broken JSON after the list": `{"requests":[{"custom_id":"a","params":{}}], "x": }`,
		fmt.Sprintf("more than %d requests", maxMessageRequests): many,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := messageLines([]byte(body)); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}
