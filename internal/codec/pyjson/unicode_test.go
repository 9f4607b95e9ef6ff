package pyjson_test

import "unicode"

// unicodeTable covers ASCII (controls included), DEL and the C1 controls,
// the line and paragraph separators, the BOM and non-characters at the top
// of the BMP, CJK, and astral characters up to U+10FFFF.
func unicodeTable() unicode.RangeTable {
	return unicode.RangeTable{
		R16: []unicode.Range16{
			{Lo: 0x0000, Hi: 0x00ff, Stride: 1},
			{Lo: 0x2028, Hi: 0x2029, Stride: 1},
			{Lo: 0x4e00, Hi: 0x4e10, Stride: 1},
			{Lo: 0xfeff, Hi: 0xfeff, Stride: 1},
			{Lo: 0xfffe, Hi: 0xffff, Stride: 1},
		},
		R32: []unicode.Range32{
			{Lo: 0x1f600, Hi: 0x1f610, Stride: 1},
			{Lo: 0x10fffe, Hi: 0x10ffff, Stride: 1},
		},
	}
}
