// Package sweepengine holds the native fuzz targets that run the real
// sweep-state engine, through its command line, on a real file next to the
// executable model (model/sweep): command sequences, hand-edited state
// files, upsert payloads, legacy imports and time texts. See fuzz/README.md.
package sweepengine
