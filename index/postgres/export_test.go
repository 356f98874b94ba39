package postgres

// AnchorPosting is anchorPosting, for the benchmark's copy.
var AnchorPosting = anchorPosting

// BlockShift is blockShift, for the benchmark's copy.
const BlockShift = blockShift

// PackIDs is packIDs, for the benchmark's copy.
var PackIDs = packIDs
