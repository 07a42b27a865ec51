package dev.fairway.lb.kubernetes;

import java.io.IOException;

/**
 * The Kubernetes API server refused to give the EndpointSlices: {@code 403 Forbidden} (the service
 * account lacks get, list and watch on {@code endpointslices} in {@code discovery.k8s.io}) or
 * {@code 401 Unauthorized} (no valid token). {@link KubernetesTargetSource#whenReady()} fails with it
 * when this happens before the first list; the source keeps retrying with backoff, so granting the
 * permission later is enough.
 */
public final class KubernetesApiException extends IOException {
  private static final long serialVersionUID = 1L;

  private final int statusCode;
  private final String reason;

  KubernetesApiException(int statusCode, String reason, String message) {
    super(message);
    this.statusCode = statusCode;
    this.reason = reason;
  }

  /** The HTTP status: 403 or 401. */
  public int statusCode() {
    return statusCode;
  }

  /** The {@code reason} of the API server's {@code Status} ({@code Forbidden}, {@code Unauthorized}), or {@code ""}. */
  public String reason() {
    return reason;
  }
}
