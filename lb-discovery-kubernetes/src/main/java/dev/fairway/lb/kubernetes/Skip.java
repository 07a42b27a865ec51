package dev.fairway.lb.kubernetes;

/**
 * Why one slice, endpoint or event could not be used: {@code key} says which (a slice name, or
 * {@code slice/address}), {@code reason} is a short fixed word that becomes the metric's tag, and
 * {@code detail} is for the log line.
 */
record Skip(String key, String reason, String detail) {}
