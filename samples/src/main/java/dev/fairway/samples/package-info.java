/**
 * Runnable samples behind {@code fairway-samples.jar}: {@link dev.fairway.samples.Quickstart},
 * {@link dev.fairway.samples.ConsulDemo} and the scenario lab ({@link dev.fairway.samples.lab}).
 * Not part of Fairway's API; everything here may change.
 */
package dev.fairway.samples;
