package gemini

import (
	"strings"

	"github.com/tidwall/gjson"
)

// CheckConvertible refuses, with a 400 naming the field, a generateContent
// body that uses features the IR cannot carry and whose loss would change the
// answer: built-in tools, cached content, code-execution parts, non-text
// output modalities, speech output and MIME types other than text or JSON.
// The relay calls it only when converting to another format; passthrough to
// an upstream of this format forwards them untouched. It returns nil for a
// body DecodeRequest would reject anyway.
func CheckConvertible(body []byte) error {
	if !gjson.ValidBytes(body) {
		return nil
	}
	var err error
	gjson.ParseBytes(body).ForEach(func(k, v gjson.Result) bool {
		key := k.String()
		if !present(v) {
			return true
		}
		switch key {
		case "cachedContent", "cached_content":
			err = unconvertible(key, "cached content exists only on upstreams of this format")
		case "tools":
			err = checkTools(v, key)
		case "generationConfig", "generation_config":
			err = checkGeneration(v, key)
		case "contents":
			err = checkContents(v, key)
		}
		return err == nil
	})
	return err
}

func unconvertible(p, why string) error {
	e := badField(p, "%s; it cannot be converted for the model's upstream", why)
	e.Code = "unsupported_feature"
	return e
}

func checkTools(v gjson.Result, p string) error {
	var err error
	_ = eachElem(v, func(i int, t gjson.Result) error {
		return eachField(t, func(key string, f gjson.Result) error {
			if present(f) && key != "functionDeclarations" && key != "function_declarations" {
				err = unconvertible(join(index(p, i), key), "built-in tools work only on upstreams of this format")
			}
			return err
		})
	})
	return err
}

func checkGeneration(v gjson.Result, p string) error {
	return eachField(v, func(key string, f gjson.Result) error {
		if !present(f) {
			return nil
		}
		fp := join(p, key)
		switch key {
		case "speechConfig", "speech_config":
			return unconvertible(fp, "speech output is not available")
		case "responseModalities", "response_modalities":
			return eachElem(f, func(i int, m gjson.Result) error {
				if !strings.EqualFold(m.String(), "TEXT") {
					return unconvertible(index(fp, i), "only text output is available")
				}
				return nil
			})
		case "responseMimeType", "response_mime_type":
			switch strings.ToLower(f.String()) {
			case "", "text/plain", "application/json":
				return nil
			}
			return unconvertible(fp, "only text/plain and application/json output are available")
		}
		return nil
	})
}

func checkContents(v gjson.Result, p string) error {
	return eachElem(v, func(i int, c gjson.Result) error {
		parts := c.Get("parts")
		pp := join(index(p, i), "parts")
		return eachElem(parts, func(j int, part gjson.Result) error {
			return eachField(part, func(key string, f gjson.Result) error {
				switch key {
				case "executableCode", "executable_code", "codeExecutionResult", "code_execution_result":
					if present(f) {
						return unconvertible(join(index(pp, j), key), "code execution works only on upstreams of this format")
					}
				}
				return nil
			})
		})
	})
}
