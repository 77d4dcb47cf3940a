package fakehost

import "strings"

// flags are a command's short options: each letter it was given, with the value of those that
// take one (the last one given wins).
type flags map[byte]string

func (f flags) has(letter byte) bool { _, ok := f[letter]; return ok }

// parseFlags reads short options the way GNU getopt does: options may follow operands, and
// "--" ends them. bools are the letters that take no value, values those that take one; long
// maps a long option ("--force") to its letter. Any other option is not modelled: the command
// fails loudly rather than ignore what it was asked.
func parseFlags(c *Call, args []string, bools, values string, long map[string]byte) (flags, []string, bool) {
	return getopt(c, args, bools, values, long, true)
}

// getopt parses options; without permute, the first operand ends them, as POSIX's getopt and
// sh's own options do.
func getopt(c *Call, args []string, bools, values string, long map[string]byte, permute bool) (flags, []string, bool) {
	f := flags{}
	var operands []string
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if !permute {
				break
			}
			operands = append(operands, a)
			continue
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a, "=")
			letter, ok := long[name]
			switch {
			case !ok:
				c.NotModelled("option " + a)
				return nil, nil, false
			case strings.IndexByte(values, letter) >= 0 && !hasVal:
				if i+1 >= len(args) {
					c.Errorf(1, "option %s needs a value", a)
					return nil, nil, false
				}
				i++
				val = args[i]
			}
			f[letter] = val
			continue
		}
		for j := 1; j < len(a); j++ {
			letter := a[j]
			switch {
			case strings.IndexByte(bools, letter) >= 0:
				f[letter] = ""
			case strings.IndexByte(values, letter) >= 0:
				val := a[j+1:]
				if val == "" {
					if i+1 >= len(args) {
						c.Errorf(1, "option -%c needs a value", letter)
						return nil, nil, false
					}
					i++
					val = args[i]
				}
				f[letter] = val
				j = len(a)
			default:
				c.NotModelled("option -" + string(letter))
				return nil, nil, false
			}
		}
	}
	return f, append(operands, args[min(i, len(args)):]...), true
}
