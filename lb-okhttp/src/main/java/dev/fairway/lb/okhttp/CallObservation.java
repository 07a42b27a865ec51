package dev.fairway.lb.okhttp;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.io.IOException;
import okhttp3.HttpUrl;
import okhttp3.Response;

/**
 * A Micrometer {@link Observation} named {@value #NAME} around each balanced call, so tracing
 * (Micrometer Tracing, OpenTelemetry) and observation handlers see which instance served it. Only
 * when the interceptor was given an {@link ObservationRegistry}; without one the interceptor holds
 * none of these and the call path has no extra step.
 *
 * <p>Key values: {@code service} (low cardinality: the balancer's service) and, once a response came
 * back, {@code target} (high cardinality: the {@code host:port} that answered, the winning copy's when
 * hedged). The observation runs on the caller's thread from the call entering the interceptor, over
 * every attempt and backoff, until the response's headers are back or the call failed (then with the
 * error); reading the body is not part of it. Attempts and hedge copies are not observed one by one.
 *
 * <p>Uses only API of micrometer-observation 1.10 and later, below the 1.15.0 floor.
 */
final class CallObservation {
  static final String NAME = "fairway.call";

  /** One call's work; the balanced call. */
  interface Call {
    Response proceed() throws IOException;
  }

  private final ObservationRegistry registry;

  CallObservation(ObservationRegistry registry) {
    this.registry = registry;
  }

  @SuppressWarnings("try") // the scope is opened for what runs inside it (trace context), not read here
  Response observe(ServiceRoute route, Call call) throws IOException {
    Observation observation = Observation.createNotStarted(NAME, registry)
        .contextualName("fairway " + route.host)
        .lowCardinalityKeyValue("service", route.loadBalancer.service())
        .start();
    try (Observation.Scope scope = observation.openScope()) {
      Response response = call.proceed();
      observation.highCardinalityKeyValue("target", address(response.request().url()));
      return response;
    } catch (IOException | RuntimeException | Error e) {
      observation.error(e);
      throw e;
    } finally {
      observation.stop();
    }
  }

  /** {@code host:port}, an IPv6 host in brackets, as {@link dev.fairway.lb.Target#id()} writes addresses. */
  static String address(HttpUrl url) {
    String host = url.host();
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + url.port();
  }
}
