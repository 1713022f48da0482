package cfe_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
)

var (
	decimalType = reflect.TypeFor[decimal.Decimal]()
	timeType    = reflect.TypeFor[time.Time]()
)

// filledCFE returns a CFE in which every pointer is set, every slice has two
// elements and every value is non-zero and distinct, walking the model by
// reflection so that a field added later is covered without editing the test.
func filledCFE(t *testing.T) *cfe.CFE {
	t.Helper()
	c := new(cfe.CFE)
	n := 0
	fill(t, reflect.ValueOf(c).Elem(), &n)
	return c
}

func fill(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	*n++
	switch {
	case v.Type() == decimalType:
		v.Set(reflect.ValueOf(decimal.New(int64(*n), -2)))
		return
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(time.Date(2025, 1, 1, 0, 0, *n, 0, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), n)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, v.Field(i), n)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range v.Len() {
			fill(t, v.Index(i), n)
		}
	case reflect.String:
		v.SetString("s" + decimal.NewFromInt(int64(*n)).String())
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	default:
		t.Fatalf("fill: the model has a %s (%s); teach the test about it", v.Kind(), v.Type())
	}
}

// scribble changes, in place, every value reachable from v without replacing
// any pointer or slice: whatever it reaches that another value shares, that
// other value sees change.
func scribble(v reflect.Value) {
	switch {
	case v.Type() == decimalType:
		v.Set(reflect.ValueOf(v.Interface().(decimal.Decimal).Add(decimal.NewFromInt(1000))))
		return
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Hour)))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			scribble(v.Field(i))
		}
	case reflect.Slice:
		for i := range v.Len() {
			scribble(v.Index(i))
		}
	case reflect.String:
		v.SetString(v.String() + "~")
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1000)
	}
}

func scribbleCFE(c *cfe.CFE) { scribble(reflect.ValueOf(c).Elem()) }

func TestCFE_Clone(t *testing.T) {
	t.Parallel()
	t.Run("deep copy", func(t *testing.T) {
		orig := filledCFE(t)
		c := orig.Clone()
		if !reflect.DeepEqual(c, orig) {
			t.Fatalf("clone differs from the original:\n%+v\n%+v", c, orig)
		}
		scribbleCFE(c)
		if reflect.DeepEqual(c, orig) {
			t.Fatal("scribble changed nothing; the test is not testing")
		}
		if !reflect.DeepEqual(orig, filledCFE(t)) {
			t.Fatal("changing the clone changed the original: they share memory")
		}
	})
	t.Run("absent stays absent", func(t *testing.T) {
		orig := &cfe.CFE{Items: []cfe.Item{{NroLinDet: 1}}}
		if c := orig.Clone(); !reflect.DeepEqual(c, orig) {
			t.Fatalf("Clone() = %+v, want %+v (nil pointers and slices kept nil)", c, orig)
		}
	})
	t.Run("nil", func(t *testing.T) {
		if c := (*cfe.CFE)(nil).Clone(); c != nil {
			t.Fatalf("Clone of nil = %+v", c)
		}
	})
}
