package sqlstore

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// colKind is what a column holds, whatever each dialect calls its type:
// an export is read from one dialect and loaded into another, so values
// travel by kind, not by the source's type.
type colKind int

const (
	kindText colKind = iota
	kindInt
	kindFloat
	kindBool
	kindTime
	kindBlob
)

type column struct {
	name string
	kind colKind
}

// kindOf maps a driver's type name to a kind. MySQL reports BOOLEAN as
// TINYINT, which this schema uses for nothing else.
func kindOf(typeName string) colKind {
	t := strings.ToUpper(typeName)
	switch {
	case t == "TINYINT" || strings.HasPrefix(t, "BOOL"):
		return kindBool
	case strings.Contains(t, "INT"):
		return kindInt
	case strings.Contains(t, "REAL") || strings.Contains(t, "DOUBLE") || strings.Contains(t, "FLOAT") ||
		strings.Contains(t, "NUMERIC") || strings.Contains(t, "DECIMAL"):
		return kindFloat
	case strings.Contains(t, "DATE") || strings.Contains(t, "TIME"):
		return kindTime
	case strings.Contains(t, "BLOB") || t == "BYTEA":
		return kindBlob
	}
	return kindText
}

// tableColumns reads a table's columns from the database itself, so an
// export carries every column the schema has, today's and future ones.
func tableColumns(ctx context.Context, q querier, table string) ([]column, error) {
	rows, err := q.QueryContext(ctx, "SELECT * FROM "+table+" WHERE 1 = 0")
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	cols := make([]column, len(types))
	for i, t := range types {
		cols[i] = column{name: strings.ToLower(t.Name()), kind: kindOf(t.DatabaseTypeName())}
	}
	return cols, rows.Err()
}

// scanTarget returns a destination for one column and how to turn what was
// scanned into its JSON value (nil for NULL).
func scanTarget(k colKind) (any, func() any) {
	switch k {
	case kindInt:
		v := new(sql.NullInt64)
		return v, func() any { return nullable(v.Valid, v.Int64) }
	case kindFloat:
		v := new(sql.NullFloat64)
		return v, func() any { return nullable(v.Valid, v.Float64) }
	case kindBool:
		v := new(sql.NullBool)
		return v, func() any { return nullable(v.Valid, v.Bool) }
	case kindTime:
		v := new(sql.NullTime)
		return v, func() any { return nullable(v.Valid, v.Time.UTC().Format(time.RFC3339Nano)) }
	case kindBlob:
		v := new([]byte)
		return v, func() any {
			if *v == nil {
				return nil
			}
			return base64.StdEncoding.EncodeToString(*v)
		}
	}
	v := new(sql.NullString)
	return v, func() any { return nullable(v.Valid, v.String) }
}

func nullable[T any](valid bool, v T) any {
	if !valid {
		return nil
	}
	return v
}

// bindValue turns a JSON value of an export into an argument for a column
// of kind k in the target database.
func bindValue(k colKind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch k {
	case kindInt:
		switch x := v.(type) {
		case json.Number:
			return x.Int64()
		case bool:
			return map[bool]int64{false: 0, true: 1}[x], nil
		}
	case kindFloat:
		if x, ok := v.(json.Number); ok {
			return x.Float64()
		}
	case kindBool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case json.Number:
			n, err := x.Int64()
			return n != 0, err
		}
	case kindTime:
		if x, ok := v.(string); ok {
			t, err := time.Parse(time.RFC3339Nano, x)
			return dbTime(t), err
		}
	case kindBlob:
		if x, ok := v.(string); ok {
			return base64.StdEncoding.DecodeString(x)
		}
	default:
		switch x := v.(type) {
		case string:
			return x, nil
		case json.Number:
			return x.String(), nil
		}
	}
	return nil, fmt.Errorf("value %v (%T) does not fit the column", v, v)
}
