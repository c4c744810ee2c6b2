package app

// PairWindow is the billing writer's pair window, for tests that must
// outlast it.
const PairWindow = pairWindow
