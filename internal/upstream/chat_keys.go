package upstream

// chatKeyTypes are the channel types with a built-in chat wire (CONTRACT §4
// and §9): their key opens a general model account, not just a task vendor.
var chatKeyTypes = map[int]bool{
	TypeOpenAI: true, TypeAzure: true, TypeOllama: true, 8: true, TypeAnthropic: true, 20: true,
	TypeGemini: true, 25: true, 26: true, 27: true, 33: true, 34: true, 40: true, TypeVertex: true,
	42: true, TypeDeepSeek: true, TypeVolcEngine: true, 48: true,
}

// HoldsChatKey reports whether channels of type t carry a chat provider's
// key. A task plugin that lists such a type in channelTypes is only given a
// channel of it when an administrator says so on that channel.
func HoldsChatKey(t int) bool { return chatKeyTypes[t] }
