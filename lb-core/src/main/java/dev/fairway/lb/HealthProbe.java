package dev.fairway.lb;

/**
 * An active health check of one target: {@code true} means healthy. Throwing, returning
 * {@code false} or running past the configured timeout all count as a failed check. Called from the
 * balancer's health threads, never from a pick.
 */
@FunctionalInterface
public interface HealthProbe {
  boolean check(Target target) throws Exception;
}
