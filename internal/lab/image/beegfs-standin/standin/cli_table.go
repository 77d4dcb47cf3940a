package main

// STAND-IN: the `beegfs` command's tables as the real one prints them
// (go-pretty, no borders): upper-case headers, each cell left-aligned,
// padded to its column's width and followed by two blanks, an empty line
// after every page and at the end, nothing at all for no rows.

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

type table struct {
	out      io.Writer
	columns  []string // every column, in order
	shown    map[string]bool
	rows     [][]string
	pageSize int
}

func newTable(c *cli, all, defaults []string) *table {
	shown := map[string]bool{}
	selected := defaults
	if c.boolFlag("debug") {
		selected = all
	}
	if cols := c.flag("columns"); cols != "" {
		selected = strings.Split(cols, ",")
	}
	for _, s := range selected {
		s = strings.ReplaceAll(strings.TrimSpace(s), " ", "_")
		if s == "all" {
			for _, a := range all {
				shown[a] = true
			}
		}
		shown[s] = true
	}
	size, err := strconv.Atoi(c.flag("page-size"))
	if err != nil || size < 0 {
		size = 100
	}
	return &table{out: c.stdout, columns: all, shown: shown, pageSize: size}
}

func (t *table) add(cells ...string) {
	t.rows = append(t.rows, cells)
	if t.pageSize == 0 {
		_, _ = fmt.Fprintln(t.out, t.render())
		t.rows = nil
	} else if len(t.rows) == t.pageSize {
		_, _ = fmt.Fprintf(t.out, "%s\n\n", t.render())
		t.rows = nil
	}
}

// flush prints what is left of the last page.
func (t *table) flush() {
	if t.pageSize != 0 && len(t.rows) > 0 {
		_, _ = fmt.Fprintf(t.out, "%s\n\n", t.render())
		t.rows = nil
	}
}

func (t *table) render() string {
	var idx []int
	for i, c := range t.columns {
		if t.shown[c] {
			idx = append(idx, i)
		}
	}
	lines := t.rows
	if t.pageSize > 0 {
		header := make([]string, len(t.columns))
		for i, c := range t.columns {
			header[i] = strings.ToUpper(c)
		}
		lines = append([][]string{header}, t.rows...)
	}
	width := map[int]int{}
	for _, row := range lines {
		for _, i := range idx {
			width[i] = max(width[i], len([]rune(row[i])))
		}
	}
	out := make([]string, 0, len(lines))
	for _, row := range lines {
		var b strings.Builder
		for _, i := range idx {
			b.WriteString(row[i])
			b.WriteString(strings.Repeat(" ", width[i]-len([]rune(row[i]))+2))
		}
		out = append(out, b.String())
	}
	return strings.Join(out, "\n")
}

// formatPrefix is unitconv.FormatPrefix with one decimal: the value scaled
// below the next prefix, e.g. 1.8Ti (IEC) or 122.1M (SI).
func formatPrefix(v float64, iec bool) string {
	base, prefixes := 1000.0, []string{"", "k", "M", "G", "T", "P", "E"}
	if iec {
		base, prefixes = 1024.0, []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
	}
	i := 0
	for v >= base && i < len(prefixes)-1 {
		v /= base
		i++
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + prefixes[i]
}

// Display strings of the API's states, as the real CLI maps them.
var (
	reachabilityNames = map[string]string{"online": "Online", "poffline": "Probably-offline", "offline": "Offline"}
	consistencyNames  = map[string]string{"good": "Good", "needs_resync": "Needs-resync", "bad": "Bad"}
	capPoolNames      = map[string]string{"normal": "Normal", "low": "Low", "emergency": "Emergency"}
)

// printTargetList is the real PrintTargetList: targets in the order given.
func printTargetList(c *cli, ts []apiTarget, state, capacity bool, nodeType string) {
	all := []string{"uid", "id", "type", "alias", "node", "storage_pool", "reachability", "last_contact", "consistency", "sync_state", "cap_pool", "space", "space_used", "space_free", "inodes", "inodes_used", "inodes_free"}
	defaults := []string{"id", "type", "alias", "node", "storage_pool"}
	if state {
		defaults = append(defaults, "reachability", "last_contact", "consistency", "sync_state")
	}
	if capacity {
		defaults = append(defaults, "cap_pool", "space", "space_used", "space_free", "inodes", "inodes_used", "inodes_free")
	}
	tbl := newTable(c, all, defaults)
	for _, t := range ts {
		if nodeType != "" && t.Type != nodeType {
			continue
		}
		tbl.add(targetRow(t)...)
	}
	tbl.flush()
}

func targetRow(t apiTarget) []string {
	node := "<unmapped>"
	if t.Node != nil {
		node = legacyID(t.Node.Type, t.Node.ID)
	}
	pool := "(n/a)"
	if t.Pool != nil {
		pool = legacyID(nodeStorage, t.Pool.ID)
	}
	lastContact := "unknown"
	if t.LastContactS != nil {
		lastContact = fmt.Sprintf("%ds ago", *t.LastContactS)
	}
	space, spaceUsed, spaceFree := capacityCells(t.SpaceTotal, t.SpaceFree, true)
	inodes, inodesUsed, inodesFree := capacityCells(t.InodesTotal, t.InodesFree, false)
	syncState := "Healthy"
	if t.Consistency != "good" {
		syncState = "Unknown"
	}
	return []string{
		fmt.Sprintf("uid:%d", t.UID), legacyID(t.Type, t.ID), t.Type, t.Alias, node, pool,
		reachabilityNames[t.Reachability], lastContact, consistencyNames[t.Consistency], syncState,
		capPoolNames[t.CapPool], space, spaceUsed, spaceFree, inodes, inodesUsed, inodesFree,
	}
}

// capacityCells are the total, used (with its share) and free cells; "-"
// where the management service has no value.
func capacityCells(total, free *uint64, iec bool) (string, string, string) {
	unit := ""
	if iec {
		unit = "B"
	}
	t, u, f := "-", "-", "-"
	if total != nil {
		t = formatPrefix(float64(*total), iec) + unit
	}
	if total != nil && free != nil {
		u = formatPrefix(float64(*total)-float64(*free), iec) + unit + fmt.Sprintf(" (%.2f%%)", 100-float64(*free)/float64(*total)*100)
	}
	if free != nil {
		f = formatPrefix(float64(*free), iec) + unit
	}
	return t, u, f
}

// sortTargets orders targets by numeric ID, as the health check's tables do.
func sortTargets(ts []apiTarget) {
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].ID < ts[j].ID })
}
