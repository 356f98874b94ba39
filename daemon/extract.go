package daemon

import (
	"path/filepath"

	"github.com/simdex/simdex/extract"
)

func defaultExtractConfig() ExtractConfig {
	l := extract.DefaultLimits()
	return ExtractConfig{
		MaxObjectSize:       l.MaxObjectSize,
		MaxDecompressedSize: l.MaxDecompressedSize,
		MaxCompressionRatio: l.MaxCompressionRatio,
		MaxDepth:            l.MaxDepth,
		MaxChildren:         l.MaxChildren,
		MaxTextSize:         l.MaxTextSize,
		Timeout:             l.Timeout,
	}
}

// ExtractOptions converts the extract section.
func (c *Config) ExtractOptions() extract.Options {
	e := c.Extract
	return extract.Options{Limits: extract.Limits{
		MaxObjectSize:       e.MaxObjectSize,
		MaxDecompressedSize: e.MaxDecompressedSize,
		MaxCompressionRatio: e.MaxCompressionRatio,
		MaxDepth:            e.MaxDepth,
		MaxChildren:         e.MaxChildren,
		MaxTextSize:         e.MaxTextSize,
		Timeout:             e.Timeout,
		MaxSpoolSize:        e.MaxSpoolSize,
	}, SpoolDir: c.SpoolDir()}
}

// SpoolDir is where mailboxes are spooled while they are read.
func (c *Config) SpoolDir() string {
	if c.Extract.SpoolDir != "" {
		return c.Extract.SpoolDir
	}
	return filepath.Join(c.DataDir, "spool")
}
