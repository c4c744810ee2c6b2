// Package upstream knows how to reach each kind of channel: its wire format,
// URL layout and authentication. Adapters never retry, bill or choose
// channels; they only build requests.
package upstream

import (
	"fmt"
	"strconv"
	"strings"
)

// Channel type numbers follow the established gateways so that task
// plugins' channelTypes mean the same here.
const (
	TypeOpenAI      = 1
	TypeAzure       = 3
	TypeOllama      = 4
	TypeAnthropic   = 14
	TypeAli         = 17
	TypeGemini      = 24
	TypeMiniMax     = 35
	TypeSunoAPI     = 36
	TypeVertex      = 41
	TypeDeepSeek    = 43
	TypeVolcEngine  = 45
	TypeKling       = 50
	TypeJimeng      = 51
	TypeVidu        = 52
	TypeDoubaoVideo = 54
	TypeSora        = 55
	TypePeerAPI     = 60
	TypeTaskPlugin  = 61
)

var typeNames = map[string]int{
	"openai": TypeOpenAI, "azure": TypeAzure, "ollama": TypeOllama, "anthropic": TypeAnthropic,
	"ali": TypeAli, "gemini": TypeGemini, "minimax": TypeMiniMax, "sunoapi": TypeSunoAPI,
	"vertex": TypeVertex, "deepseek": TypeDeepSeek, "volcengine": TypeVolcEngine, "kling": TypeKling,
	"jimeng": TypeJimeng, "vidu": TypeVidu, "doubao_video": TypeDoubaoVideo, "sora": TypeSora,
	"peer_api": TypePeerAPI, "new_api": TypePeerAPI, "task_plugin": TypeTaskPlugin,
	"custom": TypeCustom, "openrouter": TypeOpenRouter, "moonshot": TypeMoonshot, "zhipu_v4": TypeZhipuV4,
	"perplexity": TypePerplexity, "aws": TypeAWS, "bedrock": TypeAWS, "cohere": TypeCohere,
	"siliconflow": TypeSiliconFlow, "mistral": TypeMistral, "xai": TypeXAI,
}

// ParseType accepts a type number, a numeric string, or a type name.
func ParseType(v any) (int, error) {
	switch t := v.(type) {
	case int:
		return t, nil
	case int64:
		return int(t), nil
	case float64:
		if t == float64(int(t)) {
			return int(t), nil
		}
	case string:
		if n, err := strconv.Atoi(t); err == nil {
			return n, nil
		}
		if n, ok := typeNames[strings.ToLower(strings.TrimSpace(t))]; ok {
			return n, nil
		}
		return 0, fmt.Errorf("unknown channel type %q", t)
	}
	return 0, fmt.Errorf("channel type must be a name or a number, got %v", v)
}

// TypeName returns the canonical name of a type number, or its number.
func TypeName(t int) string {
	for name, n := range typeNames {
		if n == t && name != "new_api" && name != "bedrock" {
			return name
		}
	}
	return strconv.Itoa(t)
}

// IsTaskOnly reports whether a type serves only task plugins.
func IsTaskOnly(t int) bool { return t == TypePeerAPI || t == TypeTaskPlugin }

// NormalizeBaseURL strips trailing slashes and a version path a user may
// have typed, so "/v1" is never doubled.
func NormalizeBaseURL(u string) string {
	u = strings.TrimRight(strings.TrimSpace(u), "/")
	for _, suffix := range []string{"/v1beta", "/v1"} {
		if strings.HasSuffix(u, suffix) {
			return strings.TrimRight(strings.TrimSuffix(u, suffix), "/")
		}
	}
	return u
}
