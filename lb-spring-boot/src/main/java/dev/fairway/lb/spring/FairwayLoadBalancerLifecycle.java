package dev.fairway.lb.spring;

import dev.fairway.lb.LoadReportHeader;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.ResponseData;
import org.springframework.http.HttpHeaders;
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
 * Before the outcome, a response's load report (ORCA's {@value LoadReportHeader#NAME} header, which
 * the starter's server filter sends) reaches the pick, whatever the status, as the OkHttp
 * interceptor does it: least queueing, least connections and power of two choices then see the
 * instance's own count of calls from every client, checked against what this balancer sees.
 * Reports are counted in {@code fairway.load.reports{service, result=parsed|malformed}}; a
 * malformed one is ignored.
 *
 * <p>Each attempt is accounted on its own: a retry on the same instance takes a new pick on that
 * instance as it starts ({@code onStartRequest}), so it too holds an in-flight slot and reports its
 * outcome. A pick that no callback reaches is released after {@code
 * fairway.loadbalancer.abandoned-pick-timeout} (see {@link OutstandingPicks}). Thread-safe.
 */
final class FairwayLoadBalancerLifecycle implements LoadBalancerLifecycle<Object, Object, ServiceInstance> {
  private final ServiceSettings settings;
  private final @Nullable Counter reportsParsed;
  private final @Nullable Counter reportsMalformed;

  FairwayLoadBalancerLifecycle(ServiceSettings settings, String service, @Nullable MeterRegistry registry) {
    this.settings = settings;
    this.reportsParsed = registry == null ? null : reportCounter(registry, service, "parsed");
    this.reportsMalformed = registry == null ? null : reportCounter(registry, service, "malformed");
  }

  private static Counter reportCounter(MeterRegistry registry, String service, String result) {
    return Counter.builder("fairway.load.reports")
        .description("Load reports (endpoint-load-metrics) read from responses; malformed ones are ignored")
        .tag("service", service).tag("result", result).register(registry);
  }

  @Override
  public void onStart(Request<Object> request) {}

  /**
   * An attempt starts on the chosen instance: a retry on the same instance gets a pick of its own
   * here (see {@link FairwayServiceInstance#beginAttempt}); the first attempt already has one.
   */
  @Override
  public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
    ServiceInstance server = lbResponse == null ? null : lbResponse.getServer();
    if (server instanceof FairwayServiceInstance chosen) {
      chosen.beginAttempt();
    }
  }

  @Override
  public void onComplete(CompletionContext<Object, ServiceInstance, Object> completion) {
    Response<ServiceInstance> response = completion.getLoadBalancerResponse();
    ServiceInstance server = response == null ? null : response.getServer();
    if (!(server instanceof FairwayServiceInstance chosen)) {
      return;
    }
    Object clientResponse = completion.getClientResponse();
    reportLoad(chosen, clientResponse);
    switch (completion.status()) {
      case DISCARD -> chosen.release();
      case FAILED -> {
        Throwable t = completion.getThrowable();
        chosen.failure(t != null ? t : new IOException("call to " + chosen.target().id() + " failed"));
      }
      case SUCCESS -> {
        int status = status(clientResponse);
        if (status > 0 && settings.isFailureStatus(status)) {
          chosen.failure(new FailureStatusException(status, chosen.target().id()));
        } else {
          chosen.success();
        }
      }
    }
  }

  private void reportLoad(FairwayServiceInstance chosen, @Nullable Object clientResponse) {
    LoadReportHeader.Outcome outcome = chosen.reportLoad(header(clientResponse));
    Counter counter = outcome == LoadReportHeader.Outcome.PARSED ? reportsParsed
        : outcome == LoadReportHeader.Outcome.MALFORMED ? reportsMalformed : null;
    if (counter != null) {
      counter.increment();
    }
  }

  /** The response's {@value LoadReportHeader#NAME} header, or null when it had none or carried no response. */
  static @Nullable String header(@Nullable Object clientResponse) {
    HttpHeaders headers = null;
    if (clientResponse instanceof ResponseData data) {
      headers = data.getHeaders();
    } else if (clientResponse instanceof ClientHttpResponse http) {
      headers = http.getHeaders();
    }
    return headers == null ? null : headers.getFirst(LoadReportHeader.NAME);
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
