package tokenize

import (
	"runtime"
	"strings"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// corpus covers the scripts and shapes where a pre-tokenizer or a merge
// differs first: mixed case, contractions, digits, CJK, right-to-left text,
// emoji sequences, code, whitespace runs, long repeats and invalid UTF-8.
var corpus = []string{
	"hello world",
	"The quick brown fox jumps over the lazy dog.",
	"I'm sure they'll say it's what we'd've DONE'S; HE'LL ReAd",
	"Ünïcödé façade naïve résumé coöperate Straße ÆØÅ",
	"東京都は日本の首都です。人工知能とゲートウェイ。",
	"我们今天去北京，然后去上海。机器学习模型网关",
	"한국어 문장도 셉니다. 안녕하세요!",
	"Привет, мир! Съешь же ещё этих мягких французских булок.",
	"مرحبا بالعالم، هذه جملة عربية للاختبار ١٢٣٤٥",
	"שלום עולם",
	"नमस्ते दुनिया, यह एक परीक्षण है।",
	"😀😃😄 👩‍👩‍👧‍👦 🇩🇪🇯🇵 ❤️‍🔥 👍🏽",
	"func main() {\n\tfmt.Println(\"hi\")\n\tfor i := 0; i < 10; i++ {\n\t\tx[i] = i*2 // double\n\t}\n}\n",
	"def f(x):\n    return {'a': [1, 2, 3], \"b\": None}  # comment\r\n",
	"SELECT * FROM users WHERE id = 42 AND name LIKE '%bob%';",
	"<|endoftext|> <|fim_prefix|><|endofprompt|>",
	"1234567890 3.14159 -0.5e10 1,000,000 0x1F",
	"   leading and trailing   ",
	"\n\n\n\t\t\t    \r\n  \n",
	"a\u00a0b\u2003c\u3000d",
	strings.Repeat("a", 3000),
	strings.Repeat("ab", 1500),
	strings.Repeat("🙂", 400),
	strings.Repeat(" ", 1000) + "x",
	strings.Repeat("ha", 200) + strings.Repeat("\n", 50),
	strings.Repeat("The gateway counts tokens. ", 200),
	"https://example.com/path/to/page?query=1&x=%20#frag",
	"\xff\xfe broken \xc3 utf8 \xe2\x82",
	"mixedCamelCaseIdentifiers and snake_case_names and SCREAMING_CASE",
	"a/b/c//d\n/e",
}

func TestCountMatchesTiktokenReference(t *testing.T) {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	for _, enc := range []struct {
		name, model string
	}{{"o200k_base", "gpt-4o"}, {"cl100k_base", "gpt-4"}} {
		ref, err := tiktoken.GetEncoding(enc.name)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range corpus {
			want := len(ref.EncodeOrdinary(text))
			if got := Count(enc.model, text); got != want {
				t.Errorf("%s: Count(%.40q) = %d, reference %d", enc.name, text, got, want)
			}
		}
	}
}

func TestRankTableMatchesEveryReferenceToken(t *testing.T) {
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		ranks, err := loader.NewOfflineLoader().LoadTiktokenBpe(name + ".tiktoken")
		if err != nil {
			t.Fatal(err)
		}
		enc := map[string]*encoding{"o200k_base": o200k, "cl100k_base": cl100k}[name].get()
		for tok, want := range ranks {
			if got := enc.table.rank(tok); got != want {
				t.Fatalf("%s: rank(%q) = %d, want %d", name, tok, got, want)
			}
		}
		for _, miss := range []string{"", "\x00\x00\x00\x00\x00\x00\x00\x00\x00", "zzzzzzzzzzzzqqqq"} {
			if got := enc.table.rank(miss); got != -1 {
				t.Errorf("%s: rank(%q) = %d, want -1", name, miss, got)
			}
		}
	}
}

// TestTablesStayOffTheGoHeap holds both encodings to what they add to the
// live heap, measured after a GC the way an operator would see it: on Linux
// the tables live in their own mappings (table_linux.go), so only the
// encoders and their compiled patterns count; elsewhere the tables too.
func TestTablesStayOffTheGoHeap(t *testing.T) {
	budget := int64(512 << 10)
	if runtime.GOOS != "linux" {
		budget = 5 << 20
	}
	before := liveHeap()
	a, err := o200k.load()
	if err != nil {
		t.Fatal(err)
	}
	b, err := cl100k.load()
	if err != nil {
		t.Fatal(err)
	}
	after := liveHeap()
	grown := int64(after) - int64(before)
	t.Logf("o200k+cl100k live heap %.2f MB (tables alone %.2f MB)", float64(grown)/(1<<20),
		float64(a.table.memory()+b.table.memory())/(1<<20))
	if grown > budget {
		t.Fatalf("the encodings hold %d bytes of heap, budget %d", grown, budget)
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
}

func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func benchCorpus() string { return strings.Join(corpus[:20], "\n") }

func BenchmarkCountCorpus(b *testing.B) {
	text := benchCorpus()
	Count("gpt-4o", text)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Count("gpt-4o", text)
	}
}

func BenchmarkCountCorpusTiktokenReference(b *testing.B) {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	ref, err := tiktoken.GetEncoding("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	text := benchCorpus()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ref.EncodeOrdinary(text)
	}
}

func BenchmarkCountShortPromptTiktokenReference(b *testing.B) {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	ref, err := tiktoken.GetEncoding("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ref.EncodeOrdinary("Say hello to the gateway benchmark, please, in one short sentence.")
	}
}

// FuzzCountMatchesReference checks any text counts as tiktoken-go counts it.
func FuzzCountMatchesReference(f *testing.F) {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	ref, err := tiktoken.GetEncoding("o200k_base")
	if err != nil {
		f.Fatal(err)
	}
	refCl, err := tiktoken.GetEncoding("cl100k_base")
	if err != nil {
		f.Fatal(err)
	}
	for _, text := range corpus[:20] {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := Count("gpt-4o", text), len(ref.EncodeOrdinary(text)); got != want {
			t.Fatalf("o200k: Count(%q) = %d, reference %d", text, got, want)
		}
		if got, want := Count("gpt-4", text), len(refCl.EncodeOrdinary(text)); got != want {
			t.Fatalf("cl100k: Count(%q) = %d, reference %d", text, got, want)
		}
	})
}
