package compat

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
)

var moderationCategories = []string{"harassment", "harassment/threatening", "hate", "hate/threatening", "illicit",
	"illicit/violent", "self-harm", "self-harm/instructions", "self-harm/intent", "sexual", "sexual/minors",
	"violence", "violence/graphic"}

// moderations flags an input that mentions hurting someone as violence and
// passes anything else. A call without a model must arrive with the
// gateway's default moderation model filled in.
func (u *openAIUpstream) moderations(x *exchange) {
	raw, model, ok := x.jsonBody([]string{"model", "input"}, moderationModel, defaultModeration)
	if !ok {
		return
	}
	inputs := stringOrList(raw["input"])
	if len(inputs) == 0 {
		x.refuse("input must be a string or a list of strings")
		return
	}
	results := make([]any, len(inputs))
	for i, in := range inputs {
		violent := strings.Contains(strings.ToLower(in), "hurt")
		cats, scores := map[string]bool{}, map[string]float64{}
		for _, c := range moderationCategories {
			cats[c], scores[c] = false, 0.001
		}
		if violent {
			cats["violence"], scores["violence"] = true, 0.97
		}
		results[i] = map[string]any{"flagged": violent, "categories": cats, "category_scores": scores}
	}
	x.served(model)
	writeJSON(x.w, http.StatusOK, map[string]any{"id": "modr-fake", "model": model, "results": results})
}

// rerank scores each document by the query words it contains and returns
// the best first, each with its index in the request, like the rerank APIs
// (Jina, Cohere-compatible) the gateway forwards to.
func (u *openAIUpstream) rerank(x *exchange) {
	raw, model, ok := x.jsonBody([]string{"model", "query", "documents", "top_n", "return_documents",
		"max_chunks_per_doc", "rank_fields"}, rerankModel)
	if !ok {
		return
	}
	query := str(raw["query"])
	var docs []string
	if json.Unmarshal(raw["documents"], &docs) != nil || len(docs) == 0 || query == "" {
		x.refuse("query must be a non-empty string and documents a non-empty list of strings")
		return
	}
	var topN int
	var withDocs bool
	_ = json.Unmarshal(raw["top_n"], &topN)
	_ = json.Unmarshal(raw["return_documents"], &withDocs)
	type scored struct {
		index int
		score float64
	}
	ranked := make([]scored, len(docs))
	words := strings.Fields(strings.ToLower(query))
	for i, d := range docs {
		hits := 0
		for _, w := range words {
			if strings.Contains(strings.ToLower(d), w) {
				hits++
			}
		}
		ranked[i] = scored{i, float64(hits) / float64(len(words))}
	}
	sort.SliceStable(ranked, func(a, b int) bool { return ranked[a].score > ranked[b].score })
	if topN > 0 && topN < len(ranked) {
		ranked = ranked[:topN]
	}
	results := make([]any, len(ranked))
	for i, r := range ranked {
		res := map[string]any{"index": r.index, "relevance_score": r.score}
		if withDocs {
			res["document"] = map[string]any{"text": docs[r.index]}
		}
		results[i] = res
	}
	x.served(model)
	writeJSON(x.w, http.StatusOK, map[string]any{"id": "rerank-fake", "model": model, "results": results,
		"usage": map[string]any{"total_tokens": fakeInputTokens}})
}

// search answers a web search with one result naming the query.
func (u *openAIUpstream) search(x *exchange) {
	raw, model, ok := x.jsonBody([]string{"model", "query", "max_results", "search_context_size", "user_location"}, searchModel)
	if !ok {
		return
	}
	query := str(raw["query"])
	if query == "" {
		x.refuse("query must be a non-empty string")
		return
	}
	x.served(model)
	writeJSON(x.w, http.StatusOK, map[string]any{"id": "search-fake", "object": "search.result", "model": model, "query": query,
		"results": []any{map[string]any{"title": "Result for " + query, "url": "https://example.com/search-fake", "snippet": "A fake search result."}}})
}
