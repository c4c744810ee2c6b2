package manifest

import "slices"

// schemaValue validates a usage schema object; an empty one is valid.
func (v *validator) schemaValue(path string, value any) (UsageSchema, bool) {
	obj, ok := objectOf(value)
	if !ok {
		v.addf(path, "must be an object of usage fields, got %s", kindOf(value))
		return nil, false
	}
	start := v.count()
	schema := UsageSchema{}
	for _, name := range sortedKeys(obj) {
		fieldPath := dot(path, name)
		if !usageKeyPattern.MatchString(name) {
			v.addf(fieldPath, "is not a valid usage field name (letters, digits and _, not starting with a digit)")
			continue
		}
		if f, ok := v.usageField(fieldPath, obj[name]); ok {
			schema[name] = f
		}
	}
	return schema, v.count() == start
}

func (v *validator) usageField(path string, value any) (UsageField, bool) {
	obj, ok := objectOf(value)
	if !ok {
		v.addf(path, "must be an object, got %s", kindOf(value))
		return UsageField{}, false
	}
	start := v.count()
	var f UsageField
	if _, isEnum := obj["enum"]; isEnum {
		v.rejectUnknown(path, obj, "enum", "description", "enumLabels")
		v.enumField(path, obj, &f)
	} else {
		v.typedField(path, obj, &f)
	}
	if raw, present := obj["description"]; present {
		f.Description, _ = v.localizedText(dot(path, "description"), raw, maxUsageTextRunes)
	}
	return f, v.count() == start
}

func (v *validator) typedField(path string, obj map[string]any, f *UsageField) {
	raw, present := obj["type"]
	if !present {
		v.addf(dot(path, "type"), `is required: "number" or "boolean" (or give enum)`)
		return
	}
	f.Type, _ = raw.(string)
	switch f.Type {
	case "boolean":
		v.rejectUnknown(path, obj, "type", "description")
	case "number":
		v.rejectUnknown(path, obj, "type", "unit", "unitLabel", "description")
		v.numberUnit(path, obj, f)
	default:
		v.addf(dot(path, "type"), `must be "number" or "boolean" (or give enum)`)
	}
}

func (v *validator) numberUnit(path string, obj map[string]any, f *UsageField) {
	raw, present := obj["unit"]
	if !present {
		v.addf(dot(path, "unit"), "is required for number fields: count, second, token or credit")
	} else if s, ok := v.stringValue(dot(path, "unit"), raw); ok {
		if slices.Contains(usageUnits, s) {
			f.Unit = s
		} else {
			v.addf(dot(path, "unit"), "must be count, second, token or credit")
		}
	}
	if raw, present := obj["unitLabel"]; present {
		if f.Unit != UnitCount && f.Unit != "" {
			v.addf(dot(path, "unitLabel"), "is only allowed with unit count")
			return
		}
		f.UnitLabel, _ = v.localizedText(dot(path, "unitLabel"), raw, maxUsageTextRunes)
	}
}

func (v *validator) enumField(path string, obj map[string]any, f *UsageField) {
	values, ok := v.stringList(dot(path, "enum"), obj["enum"], dropDuplicates, func(p, s string) (string, bool) {
		// An empty value could not be told from a fact that was not given.
		if s == "" {
			v.addf(p, "must not be empty")
			return "", false
		}
		return s, true
	})
	if ok && len(values) == 0 {
		v.addf(dot(path, "enum"), "must list at least one value")
	}
	f.Enum = values
	raw, present := obj["enumLabels"]
	if !present {
		return
	}
	labels, isObj := objectOf(raw)
	if !isObj {
		v.addf(dot(path, "enumLabels"), "must be an object mapping enum values to texts, got %s", kindOf(raw))
		return
	}
	f.EnumLabels = map[string]LocalizedText{}
	for _, key := range sortedKeys(labels) {
		labelPath := dot(dot(path, "enumLabels"), key)
		if !slices.Contains(values, key) {
			v.addf(labelPath, "is not one of the enum values")
			continue
		}
		if text, ok := v.localizedText(labelPath, labels[key], maxUsageTextRunes); ok {
			f.EnumLabels[key] = text
		}
	}
}

// examplesValue validates examples against schema; facts are only checked
// when the schema itself is valid.
func (v *validator) examplesValue(path string, value any, schema UsageSchema, schemaOK bool) []UsageExample {
	items, ok := arrayOf(value)
	if !ok {
		v.addf(path, "must be an array of {label, facts}, got %s", kindOf(value))
		return nil
	}
	out := make([]UsageExample, 0, len(items))
	for i, item := range items {
		if ex, ok := v.example(at(path, i), item, schema, schemaOK); ok {
			out = append(out, ex)
		}
	}
	if schemaOK && len(items) == 0 {
		v.requireTokenExample(path, schema, nil)
	}
	return out
}

func (v *validator) example(path string, item any, schema UsageSchema, schemaOK bool) (UsageExample, bool) {
	obj, ok := objectOf(item)
	if !ok {
		v.addf(path, "must be an object {label, facts}, got %s", kindOf(item))
		return UsageExample{}, false
	}
	start := v.count()
	v.rejectUnknown(path, obj, "label", "facts")
	var ex UsageExample
	if raw, present := obj["label"]; !present {
		v.addf(dot(path, "label"), "is required")
	} else if s, ok := v.stringValue(dot(path, "label"), raw); ok {
		ex.Label, _ = v.requiredText(dot(path, "label"), s)
	}
	facts, isObj := objectOf(obj["facts"])
	if !isObj {
		v.addf(dot(path, "facts"), "must be an object of usage facts, got %s", kindOf(obj["facts"]))
		return ex, false
	}
	if schemaOK {
		ex.Facts = v.facts(dot(path, "facts"), facts, schema)
	}
	return ex, v.count() == start
}

// facts checks that an example names every schema field, no other, and
// gives each a value its field accepts.
func (v *validator) facts(path string, facts map[string]any, schema UsageSchema) map[string]any {
	out := map[string]any{}
	for _, name := range sortedFieldNames(schema) {
		if _, present := facts[name]; !present {
			v.addf(dot(path, name), "is required: examples give every usage field")
		}
	}
	for _, name := range sortedKeys(facts) {
		field, known := schema[name]
		if !known {
			v.addf(dot(path, name), "is not a field of the usage schema")
			continue
		}
		if value, msg := factValue(field, facts[name]); msg != "" {
			v.addf(dot(path, name), "%s", msg)
		} else {
			out[name] = value
		}
	}
	return out
}

func factValue(f UsageField, value any) (any, string) {
	switch {
	case f.Enum != nil:
		s, ok := value.(string)
		if !ok || !slices.Contains(f.Enum, s) {
			return nil, "must be one of the field's enum values"
		}
		return s, ""
	case f.Type == "boolean":
		b, ok := value.(bool)
		if !ok {
			return nil, "must be a boolean"
		}
		return b, ""
	}
	n, ok := Number(value)
	if !ok {
		return nil, "must be a number"
	}
	return n, ""
}
