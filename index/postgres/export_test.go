package postgres

// AnchorPosting is anchorPosting, for the benchmark's copy.
var AnchorPosting = anchorPosting
