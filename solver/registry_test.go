package solver

import (
	"strings"
	"testing"
)

// Every model default names a registered solver whose domain covers the
// whitened tensors the models hand over, and every registered solver
// documents its domain.
func TestModelDefaultsAndDescriptions(t *testing.T) {
	for model, name := range ModelDefaults {
		if _, err := ByName(name); err != nil {
			t.Fatalf("model %s: default %v", model, err)
		}
		if !strings.Contains(Describe(name), "whitened") {
			t.Fatalf("model %s: default %s does not take whitened tensors: %q", model, name, Describe(name))
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
