package compat

import "testing"

// These cases pin down, without the CLIs, that the coding-agent fakes play
// their script and refuse what the real APIs refuse.

var readScript = agentScript{model: "m-1", tool: "read", param: "path", args: map[string]any{"path": "/w/note.txt"}, secret: "kiwi"}

func TestAgentChatFakeChecksWhatItReceives(t *testing.T) {
	f := startAgentFake(t, "openai", "k", agentChat{"k"}, readScript)
	auth := map[string]string{"Authorization": "Bearer k"}
	tools := `"tools":[{"type":"function","function":{"name":"read","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}]`
	call := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":"{}"}}]}`
	runFakeCases(t, f.fake, []fakeCase{
		{"calls the agent's tool", "/v1/chat/completions", auth,
			`{"model":"m-1","messages":[{"role":"user","content":"go"}],` + tools + `}`, 200, `"arguments":"{\"path\":\"/w/note.txt\"}","name":"read"`},
		{"answers the tool's output", "/v1/chat/completions", auth,
			`{"model":"m-1","messages":[{"role":"user","content":"go"},` + call + `,{"role":"tool","tool_call_id":"call_1","content":"secret: kiwi"}],` + tools + `}`,
			200, "The secret word is kiwi."},
		{"answers a call without tools with text", "/v1/chat/completions", auth,
			`{"model":"m-1","messages":[{"role":"user","content":"title?"}]}`, 200, "Reading a note"},
		{"refuses a result that answers no call", "/v1/chat/completions", auth,
			`{"model":"m-1","messages":[{"role":"user","content":"go"},{"role":"tool","tool_call_id":"call_9","content":"kiwi"}]}`, 400, "answers no preceding tool call"},
		{"refuses a result without the note", "/v1/chat/completions", auth,
			`{"model":"m-1","messages":[{"role":"user","content":"go"},` + call + `,{"role":"tool","tool_call_id":"call_1","content":"nothing"}]}`, 400, "does not carry"},
		{"refuses a schema that lost the argument", "/v1/chat/completions", auth,
			`{"model":"m-1","messages":[{"role":"user","content":"go"}],"tools":[{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}]}`, 400, "lost its"},
		{"refuses a role the wire has not got", "/v1/chat/completions", auth,
			`{"model":"m-1","messages":[{"role":"model","content":"go"}]}`, 400, "is not valid"},
	})
}

func TestAgentMessagesFakeChecksWhatItReceives(t *testing.T) {
	f := startAgentFake(t, "anthropic", "k", agentMessages{"k"}, readScript)
	auth := map[string]string{"x-api-key": "k", "anthropic-version": "2023-06-01"}
	tools := `"tools":[{"name":"read","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}]`
	thinking := `"max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":2048},`
	use := `{"type":"tool_use","id":"toolu_1","name":"read","input":{}}`
	result := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"kiwi"}]}`
	runFakeCases(t, f.fake, []fakeCase{
		{"signs the call when thinking is on", "/v1/messages", auth,
			`{"model":"m-1",` + thinking + `"messages":[{"role":"user","content":"go"}],` + tools + `}`, 200, `"signature":"sigm1Zm9v"`},
		{"answers a call replayed with its signed thinking", "/v1/messages", auth,
			`{"model":"m-1",` + thinking + `"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[` +
				`{"type":"thinking","thinking":"t","signature":"sigm1Zm9v"},` + use + `]},` + result + `],` + tools + `}`, 200, "The secret word is kiwi."},
		{"refuses a call replayed without thinking", "/v1/messages", auth,
			`{"model":"m-1",` + thinking + `"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[` + use + `]},` + result + `]}`,
			400, "must start with a thinking block"},
		{"refuses another signature", "/v1/messages", auth,
			`{"model":"m-1",` + thinking + `"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[` +
				`{"type":"thinking","thinking":"t","signature":"forged"},` + use + `]},` + result + `],` + tools + `}`, 400, "not the"},
		{"refuses a budget not below max_tokens", "/v1/messages", auth,
			`{"model":"m-1","max_tokens":1024,"thinking":{"type":"enabled","budget_tokens":2048},"messages":[{"role":"user","content":"go"}]}`, 400, "greater than"},
		{"refuses a system turn", "/v1/messages", auth,
			`{"model":"m-1","max_tokens":5,"messages":[{"role":"system","content":"x"}]}`, 400, "'user' or 'assistant'"},
		{"refuses a tool_use id outside the pattern", "/v1/messages", auth,
			`{"model":"m-1","max_tokens":5,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[` +
				`{"type":"tool_use","id":"call.1","name":"read","input":{}}]}]}`, 400, "should match pattern"},
		{"refuses OpenAI fields", "/v1/messages", auth,
			`{"model":"m-1","max_tokens":5,"n":1,"messages":[{"role":"user","content":"go"}]}`, 400, "Extra inputs"},
	})
}

func TestAgentGeminiFakeChecksWhatItReceives(t *testing.T) {
	signed := readScript
	signed.model = "gemini-3-x"
	f := startAgentFake(t, "gemini", "k", agentGemini{"k"}, signed)
	auth := map[string]string{"x-goog-api-key": "k"}
	path := "/v1beta/models/gemini-3-x:generateContent"
	tools := `"tools":[{"functionDeclarations":[{"name":"read","parametersJsonSchema":{"type":"object","properties":{"path":{"type":"string"}}}}]}]`
	turn := func(sig string) string {
		return `{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"functionCall":{"name":"read","args":{}}` + sig + `}]},` +
			`{"role":"user","parts":[{"functionResponse":{"name":"read","response":{"output":"kiwi"}}}]}],` + tools + `}`
	}
	runFakeCases(t, f.fake, []fakeCase{
		{"signs its call", path, auth, `{"contents":[{"role":"user","parts":[{"text":"go"}]}],` + tools + `}`, 200, `"thoughtSignature":"siggemini3xZm9v"`},
		{"answers a call replayed with its signature", path, auth, turn(`,"thoughtSignature":"siggemini3xZm9v"`), 200, "The secret word is kiwi."},
		{"accepts the documented sentinel", path, auth, turn(`,"thoughtSignature":"skip_thought_signature_validator"`), 200, "The secret word is kiwi."},
		{"refuses a call replayed unsigned", path, auth, turn(""), 400, "missing a thought_signature"},
		{"refuses a response that is not an object", path, auth,
			`{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"functionCall":{"name":"read","args":{}}}]},` +
				`{"role":"user","parts":[{"functionResponse":{"name":"read","response":"kiwi"}}]}]}`, 400, "want an object"},
		{"refuses an assistant role", path, auth, `{"contents":[{"role":"assistant","parts":[{"text":"go"}]}]}`, 400, "valid role"},
	})
}
