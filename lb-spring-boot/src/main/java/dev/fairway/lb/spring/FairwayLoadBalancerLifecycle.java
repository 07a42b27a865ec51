package dev.fairway.lb.spring;

import java.io.IOException;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.ResponseData;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpResponse;

/**
 * Reports each call's outcome to the Fairway pick it was made on (found in the chosen
 * {@link FairwayServiceInstance}; calls on other instances are left alone):
 *
 * <ul>
 *   <li>{@code DISCARD}: the pick is released (no latency, no failure);
 *   <li>{@code FAILED}: a failure with the call's exception. lb-core classifies it: a refused
 *       connection, no route or a connect timeout ejects the instance at once;
 *   <li>{@code SUCCESS}: a failure if the status is one of the service's {@code failure-status-codes}
 *       (default 500, 502, 503, 504), else a success; the latency runs from the pick to here (the
 *       response's headers).
 * </ul>
 *
 * A pick that no callback reaches is released after {@code fairway.loadbalancer.abandoned-pick-timeout}
 * (see {@link OutstandingPicks}). Stateless; thread-safe.
 */
final class FairwayLoadBalancerLifecycle implements LoadBalancerLifecycle<Object, Object, ServiceInstance> {
  private final ServiceSettings settings;

  FairwayLoadBalancerLifecycle(ServiceSettings settings) {
    this.settings = settings;
  }

  @Override
  public void onStart(Request<Object> request) {}

  @Override
  public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {}

  @Override
  public void onComplete(CompletionContext<Object, ServiceInstance, Object> completion) {
    Response<ServiceInstance> response = completion.getLoadBalancerResponse();
    ServiceInstance server = response == null ? null : response.getServer();
    if (!(server instanceof FairwayServiceInstance chosen)) {
      return;
    }
    switch (completion.status()) {
      case DISCARD -> chosen.release();
      case FAILED -> {
        Throwable t = completion.getThrowable();
        chosen.failure(t != null ? t : new IOException("call to " + chosen.target().id() + " failed"));
      }
      case SUCCESS -> {
        Object clientResponse = completion.getClientResponse();
        int status = status(clientResponse);
        if (status > 0 && settings.isFailureStatus(status)) {
          chosen.failure(new FailureStatusException(status, chosen.target().id()));
        } else {
          chosen.success();
        }
      }
    }
  }

  /** The response's status, or 0 when the completion did not carry one. */
  static int status(@Nullable Object clientResponse) {
    HttpStatusCode code = null;
    if (clientResponse instanceof ResponseData data) {
      code = data.getHttpStatus();
    } else if (clientResponse instanceof ClientHttpResponse http) {
      try {
        code = http.getStatusCode();
      } catch (IOException | RuntimeException e) {
        return 0;
      }
    }
    return code == null ? 0 : code.value();
  }

  /** The cause reported to passive health for a response whose status counts as a failure. */
  static final class FailureStatusException extends IOException {
    private static final long serialVersionUID = 1L;

    FailureStatusException(int code, String target) {
      super("HTTP " + code + " from " + target);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this; // a status, not a program error
    }
  }
}
