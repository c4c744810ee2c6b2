// Package task runs asynchronous upstream work for task plugins: it submits
// through a plugin's native routes, persists every task, polls upstreams
// from a durable, leased queue, and reserves, settles or refunds quota
// exactly once per task.
//
// The package reads plugin generations (internal/plugin) but never builds
// them. Plugin hooks are synchronous JavaScript; every byte of I/O happens
// here: descriptors returned by hooks are validated against the channel's
// host and the plugin's allow-list before anything is sent, and channel
// credentials reach hooks only through the context fields the contract
// names, never through stored data, logs or errors.
package task
