package slurm

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// maxExpanded bounds a hostlist's expansion, so a typo like gpu[1-99999999]
// is an error instead of an allocation the size of the machine.
const maxExpanded = 65536

// ExpandHostlist turns Slurm's hostlist form ("gpu[01-03,07],login01") into
// the names it stands for, in the order written. Zero-padding follows the
// lower bound of each range, as Slurm does.
func ExpandHostlist(list string) ([]string, error) {
	items, err := splitTopLevel(list)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, item := range items {
		expanded, err := expandItem(item)
		if err != nil {
			return nil, fmt.Errorf("hostlist %q: %w", list, err)
		}
		names = append(names, expanded...)
		if len(names) > maxExpanded {
			return nil, fmt.Errorf("hostlist %q: more than %d names", list, maxExpanded)
		}
	}
	return names, nil
}

// splitTopLevel splits at the commas outside brackets.
func splitTopLevel(list string) ([]string, error) {
	var items []string
	depth, start := 0, 0
	for i, r := range list {
		switch r {
		case '[':
			depth++
			if depth > 1 {
				return nil, fmt.Errorf("hostlist %q: nested brackets", list)
			}
		case ']':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("hostlist %q: unbalanced brackets", list)
			}
		case ',':
			if depth == 0 {
				items = append(items, list[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("hostlist %q: unbalanced brackets", list)
	}
	items = append(items, list[start:])
	for _, item := range items {
		if item == "" {
			return nil, fmt.Errorf("hostlist %q: empty name", list)
		}
	}
	return items, nil
}

// expandItem expands one name with any number of bracket groups
// (rack[1-2]-gpu[01-02] is the product of both).
func expandItem(item string) ([]string, error) {
	open := strings.IndexByte(item, '[')
	if open < 0 {
		return []string{item}, nil
	}
	end := strings.IndexByte(item[open:], ']')
	if end < 0 {
		return nil, fmt.Errorf("unbalanced brackets in %q", item)
	}
	end += open
	numbers, err := expandRanges(item[open+1 : end])
	if err != nil {
		return nil, err
	}
	rest, err := expandItem(item[end+1:])
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(numbers)*len(rest))
	for _, n := range numbers {
		for _, r := range rest {
			names = append(names, item[:open]+n+r)
			if len(names) > maxExpanded {
				return nil, fmt.Errorf("more than %d names", maxExpanded)
			}
		}
	}
	return names, nil
}

// expandRanges expands "01-03,07" into 01 02 03 07.
func expandRanges(spec string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(spec, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		first, err1 := strconv.Atoi(lo)
		last, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || first < 0 || !isDigits(lo) || !isDigits(hi) {
			return nil, fmt.Errorf("bad range %q", part)
		}
		if last < first {
			return nil, fmt.Errorf("range %q runs backwards", part)
		}
		if last-first >= maxExpanded {
			return nil, fmt.Errorf("range %q: more than %d names", part, maxExpanded)
		}
		for n := first; n <= last; n++ {
			out = append(out, fmt.Sprintf("%0*d", len(lo), n))
		}
	}
	return out, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// numbered is a name split into a prefix and its trailing number.
type numbered struct {
	prefix string
	digits string
	value  int
}

// CompressHostlist writes names in Slurm's hostlist form: names that share a
// prefix and end in numbers of the same width become one bracket
// (gpu01 gpu02 gpu03 gpu07 -> gpu[01-03,07]). The result is sorted and
// free of duplicates, so equal sets always compress to the same text.
func CompressHostlist(names []string) string {
	byPrefix := map[string][]numbered{}
	var plain []string
	for _, name := range dedupe(names) {
		n, ok := splitNumber(name)
		if !ok {
			plain = append(plain, name)
			continue
		}
		byPrefix[n.prefix] = append(byPrefix[n.prefix], n)
	}
	var parts []string
	for prefix, group := range byPrefix {
		parts = append(parts, compressGroup(prefix, group))
	}
	parts = append(parts, plain...)
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func splitNumber(name string) (numbered, bool) {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	digits := name[i:]
	value, err := strconv.Atoi(digits)
	if digits == "" || err != nil {
		return numbered{}, false
	}
	return numbered{prefix: name[:i], digits: digits, value: value}, true
}

// compressGroup writes one prefix's numbers as ranges. Numbers only join a
// range with numbers of the same width, so padding survives the round trip.
func compressGroup(prefix string, group []numbered) string {
	byWidth := map[int][]numbered{}
	for _, n := range group {
		byWidth[len(n.digits)] = append(byWidth[len(n.digits)], n)
	}
	var ranges [][2]numbered
	for _, same := range byWidth {
		sort.Slice(same, func(i, j int) bool { return same[i].value < same[j].value })
		for i := 0; i < len(same); {
			j := i
			for j+1 < len(same) && same[j+1].value == same[j].value+1 {
				j++
			}
			ranges = append(ranges, [2]numbered{same[i], same[j]})
			i = j + 1
		}
	}
	sort.Slice(ranges, func(i, j int) bool {
		if ranges[i][0].value != ranges[j][0].value {
			return ranges[i][0].value < ranges[j][0].value
		}
		return len(ranges[i][0].digits) < len(ranges[j][0].digits)
	})
	if len(ranges) == 1 && ranges[0][0] == ranges[0][1] {
		return prefix + ranges[0][0].digits
	}
	texts := make([]string, len(ranges))
	for i, r := range ranges {
		texts[i] = rangeText(r[0], r[1])
	}
	return prefix + "[" + strings.Join(texts, ",") + "]"
}

func rangeText(lo, hi numbered) string {
	if lo.value == hi.value {
		return lo.digits
	}
	return lo.digits + "-" + hi.digits
}

func dedupe(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
