package paging_test

import (
	"errors"
	"fmt"

	"github.com/suregql/suregql/internal/planning/paging"
)

func ExampleEncodeCursor() {
	// The cursor of the 42nd category of a filtered list. It holds the
	// position only: the list's length comes from the upstream each time.
	c := paging.EncodeCursor("categories?classification=expense", 41)

	p, err := paging.DecodeCursor("categories?classification=expense", c)
	fmt.Println(p.Offset, err)

	// The same cursor means nothing in another list.
	_, err = paging.DecodeCursor("categories?classification=income", c)
	fmt.Println(errors.Is(err, paging.ErrInvalidCursor))
	// Output:
	// 41 <nil>
	// true
}
