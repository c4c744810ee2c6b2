package plugin

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
)

// Index is a parsed marketplace index.json: each plugin key with its
// versions, the file address of each (resolved against the index address)
// and its sha256.
//
// The accepted shape, as published task-plugin marketplaces write it:
//
//	{"indexVersion": 1, "plugins": [{"key": "acme", "name": …, "description": …,
//	  "versions": [{"version": "1.0.0", "path": "acme/1.0.0/plugin.js", "sha256": "…"}]}]}
//
// plugins may also be an object keyed by plugin key, versions an object
// keyed by version, and a version's file may be given as path, file or url.
type Index struct {
	Entries []IndexEntry
}

// IndexEntry is one plugin of an index.
type IndexEntry struct {
	Key         string
	Name        string
	Description any
	Icon        string
	Author      any
	// Directory is the plugin's directory name in the index, which must
	// equal Key for an install.
	Directory string
	Versions  []IndexVersion
}

// IndexVersion is one installable version.
type IndexVersion struct {
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
	URL     string `json:"url"`
}

// ParseIndex parses an index document; base resolves relative file paths.
func ParseIndex(data []byte, base *url.URL) (*Index, error) {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil || doc == nil {
		return nil, errors.New("the index is not a JSON object")
	}
	if v, ok := doc["indexVersion"]; ok {
		if n, ok := v.(float64); !ok || n != 1 {
			return nil, fmt.Errorf("indexVersion %v is not supported; this host reads version 1", v)
		}
	}
	raw, err := keyedList(doc["plugins"], "key")
	if err != nil {
		return nil, fmt.Errorf("plugins: %w", err)
	}
	idx := &Index{}
	for i, item := range raw {
		e, err := parseEntry(item, base)
		if err != nil {
			return nil, fmt.Errorf("plugins[%d]: %w", i, err)
		}
		idx.Entries = append(idx.Entries, e)
	}
	sort.SliceStable(idx.Entries, func(i, j int) bool { return idx.Entries[i].Key < idx.Entries[j].Key })
	return idx, nil
}

// keyedList accepts a list of objects, or an object of objects whose keys
// are copied into each object's keyField.
func keyedList(v any, keyField string) ([]map[string]any, error) {
	switch t := v.(type) {
	case []any:
		out := make([]map[string]any, 0, len(t))
		for _, item := range t {
			obj, ok := item.(map[string]any)
			if !ok {
				return nil, errors.New("every item must be an object")
			}
			out = append(out, obj)
		}
		return out, nil
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]map[string]any, 0, len(t))
		for _, k := range keys {
			obj, ok := t[k].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s must be an object", k)
			}
			if _, has := obj[keyField]; !has {
				obj[keyField] = k
			}
			out = append(out, obj)
		}
		return out, nil
	case nil:
		return nil, errors.New("is missing")
	}
	return nil, errors.New("must be a list or an object")
}

func str(obj map[string]any, names ...string) string {
	for _, n := range names {
		if s, ok := obj[n].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

func parseEntry(obj map[string]any, base *url.URL) (IndexEntry, error) {
	e := IndexEntry{Key: str(obj, "key", "id"), Name: str(obj, "name"), Description: obj["description"],
		Icon: str(obj, "icon"), Author: obj["author"]}
	if e.Key == "" {
		return e, errors.New("key is missing")
	}
	if dir := str(obj, "directory", "dir"); dir != "" {
		e.Directory = path.Base(strings.TrimSuffix(dir, "/"))
	}
	versions, err := entryVersions(obj)
	if err != nil {
		return e, err
	}
	for _, v := range versions {
		iv, dir, err := parseVersion(v, base)
		if err != nil {
			return e, fmt.Errorf("%s: %w", e.Key, err)
		}
		if e.Directory == "" {
			e.Directory = dir
		}
		e.Versions = append(e.Versions, iv)
	}
	return e, nil
}

// entryVersions returns the versions list, or the entry itself when it
// describes a single version inline.
func entryVersions(obj map[string]any) ([]map[string]any, error) {
	if v, ok := obj["versions"]; ok {
		return keyedList(v, "version")
	}
	if str(obj, "version") != "" {
		return []map[string]any{obj}, nil
	}
	return nil, errors.New("versions is missing")
}

func parseVersion(obj map[string]any, base *url.URL) (IndexVersion, string, error) {
	v := IndexVersion{Version: str(obj, "version"), SHA256: normaliseSHA(str(obj, "sha256"))}
	ref := str(obj, "path", "file", "url")
	switch {
	case v.Version == "":
		return v, "", errors.New("a version has no version")
	case ref == "":
		return v, "", fmt.Errorf("version %s names no file (path or url)", v.Version)
	case !isHexSHA256(v.SHA256):
		return v, "", fmt.Errorf("version %s has no valid sha256", v.Version)
	}
	u, err := resolve(base, ref)
	if err != nil {
		return v, "", fmt.Errorf("version %s: %w", v.Version, err)
	}
	v.URL = u.String()
	return v, directoryOf(ref, v.Version), nil
}

func isHexSHA256(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 32
}

func normaliseSHA(s string) string {
	return strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(s, "sha256:"), "sha256-"))
}

func resolve(base *url.URL, ref string) (*url.URL, error) {
	r, err := url.Parse(ref)
	if err != nil {
		return nil, fmt.Errorf("file address %q is not valid", ref)
	}
	if base != nil {
		r = base.ResolveReference(r)
	}
	if r.Scheme != "http" && r.Scheme != "https" {
		return nil, fmt.Errorf("file address %q is not http(s)", ref)
	}
	return r, nil
}

// directoryOf finds the plugin directory in a file path laid out as
// <key>/<version>/plugin.js (or <key>/plugin.js).
func directoryOf(ref, version string) string {
	p := ref
	if u, err := url.Parse(ref); err == nil {
		p = u.Path
	}
	segs := strings.Split(strings.Trim(p, "/"), "/")
	n := len(segs)
	switch {
	case n >= 3 && segs[n-2] == version:
		return segs[n-3]
	case n >= 2:
		return segs[n-2]
	}
	return ""
}

func (idx *Index) find(key, version string) (*IndexEntry, *IndexVersion, error) {
	for i := range idx.Entries {
		e := &idx.Entries[i]
		if e.Key != key {
			continue
		}
		for j := range e.Versions {
			if e.Versions[j].Version == version {
				return e, &e.Versions[j], nil
			}
		}
		return nil, nil, errorf(http.StatusNotFound, "not_found", "the index has no version %q of %q", version, key)
	}
	return nil, nil, errorf(http.StatusNotFound, "not_found", "the index has no plugin %q", key)
}
