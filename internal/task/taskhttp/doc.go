// Package taskhttp is the HTTP surface of the task host protocol: the
// plugins' native routes, the standard std_video, std_responses and
// std_image endpoints, the task status and listing API and the signed
// artifact addresses. It reads requests off the wire (authentication, the
// body union, decoder hooks), hands decoded submissions to the task core
// (internal/task) and renders what the core returns; records, polling,
// billing and upstream I/O stay in the core.
package taskhttp
