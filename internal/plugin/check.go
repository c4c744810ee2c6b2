package plugin

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// CheckFile runs the upload validation offline on a plugin file and prints
// every problem as "path: message", or one summary line for a valid plugin.
// It backs `turnpike plugin check FILE`.
func CheckFile(path string, out io.Writer) (ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(out, "%s: cannot read: %v\n", path, err)
		return false
	}
	if len(data) > MaxSourceBytes {
		fmt.Fprintf(out, "source: is %d bytes; the limit is %d\n", len(data), MaxSourceBytes)
		return false
	}
	c, problems := prepare(filepath.Base(path), string(data))
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(out, p.String())
		}
		fmt.Fprintf(out, "%s: %d problem(s)\n", path, len(problems))
		return false
	}
	m := c.manifest
	for _, inf := range m.Inferred {
		fmt.Fprintln(out, "inferred "+inf.String())
	}
	var extras []string
	if len(m.Routes) > 0 {
		extras = append(extras, fmt.Sprintf("%d route(s)", len(m.Routes)))
	}
	for _, p := range m.Protocols {
		if len(p.Supports) > 0 {
			extras = append(extras, p.Name+" ("+strings.Join(p.Supports, ", ")+")")
		} else {
			extras = append(extras, p.Name)
		}
	}
	if len(m.ChannelTypes) > 0 {
		extras = append(extras, fmt.Sprintf("channel types %v", m.ChannelTypes))
	}
	summary := fmt.Sprintf("ok: %s@%s (%s), %s, models %s", m.Key, m.Version, m.Name, m.FetchMode, strings.Join(m.Models, ", "))
	if len(extras) > 0 {
		summary += "; " + strings.Join(extras, ", ")
	}
	fmt.Fprintln(out, summary)
	return true
}
