"""`moot arena`: rank models by debating them against each other, with the judging's biases measured."""
