package sandbox

var bucketPoints = []byte("points")
