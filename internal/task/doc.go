// Package task runs asynchronous upstream work for task plugins: it submits
// what a host surface decoded (Submit), persists every task, polls upstreams
// from a durable, leased queue, and reserves, settles or refunds quota
// exactly once per task. Its HTTP surface — native routes, the standard
// endpoints, the task API — is internal/task/taskhttp, which imports this
// package and never the other way round.
//
// The package reads plugin generations (internal/plugin) but never builds
// them. Plugin hooks are synchronous JavaScript; every byte of I/O happens
// here: descriptors returned by hooks are validated against the channel's
// host and the plugin's allow-list before anything is sent, and channel
// credentials reach hooks only through the context fields the contract
// names, never through stored data, logs or errors.
package task
