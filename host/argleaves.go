package host

import (
	"slices"
	"strconv"
)

// ArgLeaf is one value of a call's arguments: where it is ("user.name",
// "items[2]", "" for arguments that are one value) and the value as
// decoded. An empty object or array is a value of its own.
type ArgLeaf struct {
	Path  string
	Value any
}

// ArgLimits bound ArgLeaves: how deep it follows nesting, how many values
// it lists, and how long a member name may be (0: any length).
type ArgLimits struct {
	Depth, Values, Name int
}

// ArgsOver is the limit ArgLeaves stopped at; its zero value means none.
type ArgsOver struct {
	Depth  bool // nested deeper than ArgLimits.Depth
	Values bool // more than ArgLimits.Values values
	Name   int  // the length of a member name over ArgLimits.Name
}

// ArgLeaves lists every value of decoded arguments v by its path, object
// members in order of name and array elements in order, so that a form
// and a page showing a call's arguments walk them alike. At the first
// limit passed it stops and says which, with the values listed before it.
func ArgLeaves(v any, lim ArgLimits) ([]ArgLeaf, ArgsOver) {
	var out []ArgLeaf
	var over ArgsOver
	var walk func(path string, v any, depth int)
	walk = func(path string, v any, depth int) {
		if over != (ArgsOver{}) {
			return
		}
		if depth > lim.Depth {
			over.Depth = true
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 {
				break
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if lim.Name > 0 && len(k) > lim.Name {
					over.Name = len(k)
					return
				}
				name := k
				if path != "" {
					name = path + "." + k
				}
				walk(name, x[k], depth+1)
			}
			return
		case []any:
			if len(x) == 0 {
				break
			}
			for i, e := range x {
				walk(path+"["+strconv.Itoa(i)+"]", e, depth+1)
			}
			return
		}
		if len(out) == lim.Values {
			over.Values = true
			return
		}
		out = append(out, ArgLeaf{Path: path, Value: v})
	}
	walk("", v, 0)
	return out, over
}
