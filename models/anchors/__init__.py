"""Reserved for the anchors method (item-level target anchors, issue 23)."""
