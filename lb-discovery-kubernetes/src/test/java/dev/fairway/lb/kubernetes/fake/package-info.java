/**
 * An in-process fake of the Kubernetes API server's EndpointSlice endpoints, for tests and for the lab in
 * samples (shipped in this module's test-jar). Not part of Fairway's API.
 */
package dev.fairway.lb.kubernetes.fake;
