"""Paper B's data readers: MNIST and CIFAR-10 in their official formats, checksummed, and
the provenance of the copy in use. A layer of its own; a key covers the readers, since what they
read feeds training."""
