package paging_test

import (
	"errors"
	"fmt"

	"suregql/paging"
)

func ExampleEncodeCursor() {
	// The cursor of the 42nd category of a list of 120.
	c := paging.EncodeCursor("categories?classification=expense", 41, 120)

	p, err := paging.DecodeCursor("categories?classification=expense", c)
	fmt.Println(p.Offset, p.Total, err)

	// The same cursor means nothing in another list.
	_, err = paging.DecodeCursor("categories?classification=income", c)
	fmt.Println(errors.Is(err, paging.ErrInvalidCursor))
	// Output:
	// 41 120 <nil>
	// true
}
