package upstream

// Built-in provider types beyond those with task-vendor names (types.go).
const (
	TypeCustom      = 8
	TypeOpenRouter  = 20
	TypeMoonshot    = 25
	TypeZhipuV4     = 26
	TypePerplexity  = 27
	TypeAWS         = 33
	TypeCohere      = 34
	TypeSiliconFlow = 40
	TypeMistral     = 42
	TypeXAI         = 48
)

// builtin are the adapters this package holds: the OpenAI-compatible
// presets with their public addresses and path prefixes, Azure, and the
// two native client formats. Providers with SDK-sized needs (Bedrock,
// Vertex AI, Cohere) live in their own packages; internal/providers joins
// them all.
var builtin = map[int]Adapter{
	TypeOpenAI:      OpenAICompatible{DefaultBase: "https://api.openai.com", Prefix: "/v1", Batches: true},
	TypeAzure:       Azure{},
	TypeOllama:      OpenAICompatible{DefaultBase: "http://127.0.0.1:11434", Prefix: "/v1"},
	TypeCustom:      OpenAICompatible{Prefix: "/v1"},
	TypeAnthropic:   Anthropic{},
	TypeAli:         OpenAICompatible{DefaultBase: "https://dashscope.aliyuncs.com", Prefix: "/compatible-mode/v1"},
	TypeOpenRouter:  OpenAICompatible{DefaultBase: "https://openrouter.ai", Prefix: "/api/v1"},
	TypeGemini:      Gemini{},
	TypeMoonshot:    OpenAICompatible{DefaultBase: "https://api.moonshot.cn", Prefix: "/v1"},
	TypeZhipuV4:     OpenAICompatible{DefaultBase: "https://open.bigmodel.cn", Prefix: "/api/paas/v4"},
	TypePerplexity:  OpenAICompatible{DefaultBase: "https://api.perplexity.ai", Prefix: "", Only: []string{"/v1/chat/", "/v1/models"}},
	TypeMiniMax:     OpenAICompatible{DefaultBase: "https://api.minimax.io", Prefix: "/v1"},
	TypeSiliconFlow: OpenAICompatible{DefaultBase: "https://api.siliconflow.cn", Prefix: "/v1"},
	TypeMistral:     OpenAICompatible{DefaultBase: "https://api.mistral.ai", Prefix: "/v1"},
	TypeDeepSeek:    OpenAICompatible{DefaultBase: "https://api.deepseek.com", Prefix: "/v1", Only: []string{"/v1/chat/", "/v1/completions", "/v1/models"}},
	TypeVolcEngine:  OpenAICompatible{DefaultBase: "https://ark.cn-beijing.volces.com", Prefix: "/api/v3"},
	TypeXAI:         OpenAICompatible{DefaultBase: "https://api.x.ai", Prefix: "/v1"},
}

// taskCarriers are the known types without a chat wire: task vendors whose
// channels only task plugins use (CONTRACT §4).
var taskCarriers = map[int]bool{
	TypeSunoAPI: true, TypeKling: true, TypeJimeng: true, TypeVidu: true, TypeDoubaoVideo: true,
	TypeSora: true, TypePeerAPI: true, TypeTaskPlugin: true,
}

// Builtin returns this package's adapter for a channel type.
func Builtin(t int) (Adapter, bool) {
	a, ok := builtin[t]
	return a, ok
}

// IsTaskCarrier reports a known type that carries only task plugins.
func IsTaskCarrier(t int) bool { return taskCarriers[t] }
