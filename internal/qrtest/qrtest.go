// Package qrtest reads the service's QR codes back in tests (ZXing's Go port), so a test can
// check a QR code carries exactly the text it should.
package qrtest

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"regexp"
	"strconv"
	"testing"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
)

var (
	viewBox = regexp.MustCompile(`viewBox="0 0 (\d+) (\d+)"`)
	module  = regexp.MustCompile(`M(\d+) (\d+)h1v1h-1z`)
)

// DecodeSVG rasterises one of our QR SVGs (unit squares in one path) and reads it with ZXing.
func DecodeSVG(t testing.TB, svg []byte) string {
	t.Helper()
	m := viewBox.FindSubmatch(svg)
	if m == nil {
		t.Fatalf("not our QR SVG: %.80s", svg)
	}
	size, _ := strconv.Atoi(string(m[1]))
	const scale = 6
	img := image.NewGray(image.Rect(0, 0, size*scale, size*scale))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for _, mm := range module.FindAllSubmatch(svg, -1) {
		x, _ := strconv.Atoi(string(mm[1]))
		y, _ := strconv.Atoi(string(mm[2]))
		for dy := range scale {
			for dx := range scale {
				img.SetGray(x*scale+dx, y*scale+dy, color.Gray{})
			}
		}
	}
	return decode(t, img)
}

// DecodePNG reads a QR code in a PNG image (a browser's screenshot).
func DecodePNG(t testing.TB, b []byte) string {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, img)
}

func decode(t testing.TB, img image.Image) string {
	t.Helper()
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
	if err != nil {
		t.Fatalf("decode the QR code: %v", err)
	}
	return res.GetText()
}
