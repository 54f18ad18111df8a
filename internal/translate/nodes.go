package translate

// Direct edits of YAML trees, for the engine's hot paths: kyaml's Lookup, SetField and
// SetLabel pipelines allocate a filter chain per call, parse every path segment as a number
// and parse every string they write with a YAML 1.1 parser. These give the same trees for
// well-formed objects (mappings where mappings are expected); the callers leave other objects
// to kyaml.
