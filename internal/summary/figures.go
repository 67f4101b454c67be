package summary

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// A phase's figures are a Go struct; Cell.Metrics (summary.json's
// "metrics" object, and the CSV's columns) is their wire form and the
// generic view that compare and the CSV iterate by name. PutFigures and
// Figures convert between the two, so that no code looks a figure up by a
// string.
//
// A figures struct holds only:
//
//   - *float64 fields with a json tag naming the figure, unit in the name
//     (`json:"throughput_mbps"`). A nil field is written as an explicit null
//     (a figure the cell has but did not measure); with omitempty it is left
//     out (a figure only some cells have).
//   - embedded structs of the same kind, flattened as encoding/json does;
//     an embedded *S is a group of figures only some cells have: nil, none
//     of its keys is written; else each as its own tag says. Read back, it
//     is set when m holds any of its keys.
//   - map[string]S fields tagged `figures:"prefixed"`, S a figures struct:
//     one S per name (a host: server, client, client2), written as
//     <name>_<figure> (server_cpu_pct). A name is one word: letters and
//     digits, no underscore, so that reading them back is unambiguous.
//   - fields tagged `json:"-"`, which the codec ignores.
//
// Anything else (a float64, an int, a tag without a name, two fields of one
// name) is a programming error: the first PutFigures or Figures on the type
// panics, naming the field.

// PutFigures writes every figure of fig (a figures struct, a pointer to
// one, or a map[string]S written as prefixed) into m. Keys of m that fig
// does not name are left alone.
func PutFigures(m map[string]*float64, fig any) {
	v := reflect.ValueOf(fig)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		codecOf(v.Type()).put(m, "", v)
	case reflect.Map:
		putPrefixed(m, prefixedCodecOf(v.Type(), "PutFigures argument"), v)
	default:
		panic(fmt.Sprintf("summary.PutFigures: %T is not a figures struct", fig))
	}
}

// PutPrefixed writes fig's figures as <name>_<figure>: one entry of a
// prefixed map (server_proc_cpu_pct).
func PutPrefixed(m map[string]*float64, name string, fig any) {
	v := reflect.ValueOf(fig)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		panic(fmt.Sprintf("summary.PutPrefixed: %T is not a figures struct", fig))
	}
	c := codecOf(v.Type())
	if len(c.prefixed) > 0 {
		panic(fmt.Sprintf("summary.PutPrefixed: %s holds prefixed maps", v.Type()))
	}
	if !oneWord(name) {
		panic(fmt.Sprintf("summary: prefixed figures name %q is not one word of letters and digits", name))
	}
	c.put(m, name+"_", v)
}

// Figures reads m into *fig (a pointer to a figures struct or to a
// map[string]S): each field is set from its key, nil when m has no such key
// or a null; a prefixed map gets one entry per name for which m holds every
// figure of S that is not omitempty (an empty map is nil). m is not changed.
func Figures(m map[string]*float64, fig any) {
	v := reflect.ValueOf(fig)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		panic(fmt.Sprintf("summary.Figures: %T is not a non-nil pointer", fig))
	}
	v = v.Elem()
	switch v.Kind() {
	case reflect.Struct:
		codecOf(v.Type()).get(m, "", v)
	case reflect.Map:
		v.Set(getPrefixed(m, prefixedCodecOf(v.Type(), "Figures argument"), v.Type()))
	default:
		panic(fmt.Sprintf("summary.Figures: %T is not a figures struct", fig))
	}
}

// FigureNames is every key a figures struct writes: its figures in the
// order of its fields, then its groups' (prefixed maps left out: their
// names depend on the run).
func FigureNames(fig any) []string {
	t := reflect.TypeOf(fig)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return codecOf(t).names()
}

// figureCodec is what the codec knows of one figures struct type.
type figureCodec struct {
	fields   []figureField
	prefixed []prefixedField
	groups   []groupField
}

// groupField is an embedded *S: figures that only some cells have, all
// or none.
type groupField struct {
	index []int
	codec *figureCodec
	typ   reflect.Type // S
}

// names is every key c writes, groups' included (prefixed maps left out).
func (c *figureCodec) names() []string {
	var out []string
	for _, f := range c.fields {
		out = append(out, f.name)
	}
	for _, g := range c.groups {
		out = append(out, g.codec.names()...)
	}
	return out
}

type figureField struct {
	index     []int
	name      string
	omitEmpty bool
}

type prefixedField struct {
	index []int
	codec *figureCodec
	typ   reflect.Type // map[string]S
}

var codecs sync.Map // reflect.Type -> *figureCodec

var floatPtr = reflect.TypeOf((*float64)(nil))

func codecOf(t reflect.Type) *figureCodec {
	if c, ok := codecs.Load(t); ok {
		return c.(*figureCodec)
	}
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("summary: %s is not a figures struct", t))
	}
	c := &figureCodec{}
	c.add(t, nil, t.String())
	seen := map[string]bool{}
	for _, name := range c.names() {
		if seen[name] {
			panic(fmt.Sprintf("summary: figures struct %s: two fields are named %q", t, name))
		}
		seen[name] = true
	}
	codecs.Store(t, c)
	return c
}

// add collects the figures of struct type t, whose fields lie at index
// below the outer struct; where names it in a panic.
func (c *figureCodec) add(t reflect.Type, index []int, where string) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		idx := append(append([]int(nil), index...), i)
		at := where + "." + sf.Name
		tag, hasTag := sf.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		switch {
		case sf.Anonymous && sf.Type.Kind() == reflect.Struct && !hasTag:
			c.add(sf.Type, idx, at)
		case sf.Anonymous && sf.Type.Kind() == reflect.Pointer && sf.Type.Elem().Kind() == reflect.Struct && !hasTag:
			if !sf.IsExported() {
				panic(fmt.Sprintf("summary: figures field %s: an embedded *S must be exported", at))
			}
			g := codecOf(sf.Type.Elem())
			if len(g.prefixed) > 0 {
				panic(fmt.Sprintf("summary: figures field %s: an embedded *S cannot hold prefixed maps", at))
			}
			c.groups = append(c.groups, groupField{index: idx, codec: g, typ: sf.Type.Elem()})
		case sf.Tag.Get("figures") == "prefixed":
			if !sf.IsExported() || sf.Type.Kind() != reflect.Map || sf.Type.Key().Kind() != reflect.String {
				panic(fmt.Sprintf("summary: figures field %s: figures:\"prefixed\" needs an exported map[string]S", at))
			}
			p := prefixedCodecOf(sf.Type, at)
			c.prefixed = append(c.prefixed, prefixedField{index: idx, codec: p, typ: sf.Type})
		default:
			name, opts, _ := strings.Cut(tag, ",")
			if !sf.IsExported() || sf.Type != floatPtr || name == "" {
				panic(fmt.Sprintf("summary: figures field %s (%s, tag %q): a figure is an exported *float64 with a json name", at, sf.Type, tag))
			}
			c.fields = append(c.fields, figureField{index: idx, name: name, omitEmpty: opts == "omitempty"})
		}
	}
}

// prefixedCodecOf is the codec of a map[string]S's S.
func prefixedCodecOf(t reflect.Type, where string) *figureCodec {
	if t.Kind() != reflect.Map || t.Key().Kind() != reflect.String || t.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("summary: %s (%s) is not a map[string]S of a figures struct S", where, t))
	}
	c := codecOf(t.Elem())
	if len(c.prefixed) > 0 {
		panic(fmt.Sprintf("summary: %s: a prefixed map's figures cannot hold prefixed maps", where))
	}
	return c
}

func (c *figureCodec) put(m map[string]*float64, prefix string, v reflect.Value) {
	// Refuse a bad name before anything is written.
	for _, pf := range c.prefixed {
		checkNames(v.FieldByIndex(pf.index))
	}
	for _, f := range c.fields {
		p := v.FieldByIndex(f.index).Interface().(*float64)
		switch {
		case p != nil:
			x := *p
			m[prefix+f.name] = &x
		case !f.omitEmpty:
			m[prefix+f.name] = nil
		}
	}
	for _, g := range c.groups {
		if p := v.FieldByIndex(g.index); !p.IsNil() {
			g.codec.put(m, prefix, p.Elem())
		}
	}
	for _, pf := range c.prefixed {
		putPrefixed(m, pf.codec, v.FieldByIndex(pf.index))
	}
}

func putPrefixed(m map[string]*float64, c *figureCodec, v reflect.Value) {
	checkNames(v)
	for _, k := range v.MapKeys() {
		c.put(m, k.String()+"_", v.MapIndex(k))
	}
}

func checkNames(v reflect.Value) {
	for _, k := range v.MapKeys() {
		if !oneWord(k.String()) {
			panic(fmt.Sprintf("summary: prefixed figures name %q is not one word of letters and digits", k.String()))
		}
	}
}

func (c *figureCodec) get(m map[string]*float64, prefix string, v reflect.Value) {
	for _, f := range c.fields {
		var p *float64
		if x := m[prefix+f.name]; x != nil {
			y := *x
			p = &y
		}
		v.FieldByIndex(f.index).Set(reflect.ValueOf(p))
	}
	for _, g := range c.groups {
		p := reflect.Zero(reflect.PointerTo(g.typ))
		for _, name := range g.codec.names() {
			if _, ok := m[prefix+name]; ok {
				p = reflect.New(g.typ)
				g.codec.get(m, prefix, p.Elem())
				break
			}
		}
		v.FieldByIndex(g.index).Set(p)
	}
	for _, pf := range c.prefixed {
		v.FieldByIndex(pf.index).Set(getPrefixed(m, pf.codec, pf.typ))
	}
}

// getPrefixed finds the names of a prefixed map of type t in m: each
// one-word <name> for which m holds every figure of S that is not
// omitempty (at least one when all are). nil when there is none.
func getPrefixed(m map[string]*float64, c *figureCodec, t reflect.Type) reflect.Value {
	names := map[string]bool{}
	for k := range m {
		for _, f := range c.fields {
			if name, ok := strings.CutSuffix(k, "_"+f.name); ok && oneWord(name) {
				names[name] = true
			}
		}
	}
	out := reflect.Zero(t)
	for name := range names {
		complete := true
		for _, f := range c.fields {
			if _, ok := m[name+"_"+f.name]; !ok && !f.omitEmpty {
				complete = false
				break
			}
		}
		if !complete {
			continue
		}
		if out.IsNil() {
			out = reflect.MakeMap(t)
		}
		e := reflect.New(t.Elem()).Elem()
		c.get(m, name+"_", e)
		out.SetMapIndex(reflect.ValueOf(name).Convert(t.Key()), e)
	}
	return out
}

func oneWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// FieldWise is a flat figures struct (*float64 fields only, such as
// hostdata.CounterFigures) whose every figure is combine of that figure
// of each, in order: the sum of several hosts' counters, say.
func FieldWise[T any](each []T, combine func([]*float64) *float64) T {
	var out T
	o := reflect.ValueOf(&out).Elem()
	for i := 0; i < o.NumField(); i++ {
		vs := make([]*float64, len(each))
		for j := range each {
			vs[j] = reflect.ValueOf(&each[j]).Elem().Field(i).Interface().(*float64)
		}
		o.Field(i).Set(reflect.ValueOf(combine(vs)))
	}
	return out
}
