package solver

import (
	"strings"
	"testing"
)

// The solvers the models choose by default are registered and take the
// whitened tensors the models hand over, and every registered solver
// documents its domain.
func TestDefaultsAndDescriptions(t *testing.T) {
	for _, name := range []string{"rtpm", "ojd", "ojd0", "simultaneous"} {
		if _, err := ByName(name); err != nil {
			t.Fatalf("default %v", err)
		}
		if !strings.Contains(Describe(name), "whitened") {
			t.Fatalf("default %s does not take whitened tensors: %q", name, Describe(name))
		}
	}
	for _, name := range Names() {
		doc := Describe(name)
		if !strings.Contains(doc, "whitened") && !strings.Contains(doc, "raw") && !strings.Contains(doc, "any r") {
			t.Fatalf("%s: description names no domain: %q", name, doc)
		}
	}
	for _, name := range AsymNames() {
		if DescribeAsym(name) == "" {
			t.Fatalf("asymmetric %s has no description", name)
		}
	}
}
