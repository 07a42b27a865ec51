package dev.fairway.lb.spring;

import dev.fairway.lb.LoadReportHeader;
import dev.fairway.lb.internal.FailureStatusException;
import dev.fairway.lb.internal.LoadReportMeters;
import dev.fairway.lb.internal.OutcomeRule;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * The response is read by lb-core's {@link OutcomeRule}, the rule the OkHttp interceptor uses too:
 * its load report (ORCA's {@value LoadReportHeader#NAME} header, which the starter's server filter
 * sends) reaches the pick first, whatever the status, so least queueing, least connections and
 * power of two choices see the instance's own count of calls from every client, checked against
 * what this balancer sees; then the status decides. Reports are counted in the service's {@code
 * fairway.load.reports{service, result=parsed|malformed}} ({@link LoadReportMeters}, shared with
 * the balancers); a malformed one is ignored. The hold on those meters is given back when the
 * client context closes ({@link #close}).
 *
 * <p>Each attempt is accounted on its own: a retry on the same instance takes a new pick on that
 * instance as it starts ({@code onStartRequest}), so it too holds an in-flight slot and reports its
 * outcome. A pick that no callback reaches is released after {@code
 * fairway.loadbalancer.abandoned-pick-timeout} (see {@link OutstandingPicks}). Thread-safe.
 */
final class FairwayLoadBalancerLifecycle
    implements LoadBalancerLifecycle<Object, Object, ServiceInstance>, AutoCloseable {
  private final LoadReportMeters loadReports;
  private final OutcomeRule outcomes;
  private final AtomicBoolean closed = new AtomicBoolean();

  FairwayLoadBalancerLifecycle(ServiceSettings settings, String service, @Nullable MeterRegistry registry) {
    this.loadReports = LoadReportMeters.acquire(registry, service);
    this.outcomes = new OutcomeRule(settings.failureStatusCodes, loadReports);
  }

  /** The client context closed (Spring calls it on the bean): gives back the hold on the report meters. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      loadReports.release();
    }
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
    int failureStatus = chosen.responded(outcomes, status(clientResponse), header(clientResponse));
    switch (completion.status()) {
      case DISCARD -> chosen.release();
      case FAILED -> {
        Throwable t = completion.getThrowable();
        chosen.failure(t != null ? t : new IOException("call to " + chosen.target().id() + " failed"));
      }
      case SUCCESS -> {
        if (failureStatus != OutcomeRule.SUCCESS) {
          chosen.failure(new FailureStatusException(failureStatus, chosen.target().id()));
        } else {
          chosen.success();
        }
      }
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
}
