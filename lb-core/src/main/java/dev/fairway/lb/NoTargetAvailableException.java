package dev.fairway.lb;

import java.io.IOException;

/**
 * No target could take the call. The message names the service and why: no targets known, all
 * excluded, all at their hard concurrency limit, or all unhealthy. An {@link IOException} so that
 * HTTP clients surface it like any other failure to reach a server.
 */
public final class NoTargetAvailableException extends IOException {
  private static final long serialVersionUID = 1L;

  public NoTargetAvailableException(String message) {
    super(message);
  }

  static NoTargetAvailableException of(String service, String reason) {
    return new NoTargetAvailableException("no target available for service '" + service + "': " + reason);
  }
}
