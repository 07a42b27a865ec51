package dev.fairway.samples.lab;

import dev.fairway.lb.LoadBalancer;
import io.micrometer.core.instrument.MeterRegistry;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The lab's original client ({@code --client okhttp}): an OkHttp client whose {@code
 * LoadBalancingInterceptor} maps {@code backend} to the picks of its own {@link LoadBalancer},
 * which reports to its own registry. {@link ScenarioRun} builds the three parts; this class only
 * calls through them and reads them.
 */
final class OkHttpLabClient implements LabClient {
  private final LoadBalancer balancer;
  private final OkHttpClient client;
  private final MeterRegistry registry;

  OkHttpLabClient(LoadBalancer balancer, OkHttpClient client, MeterRegistry registry) {
    this.balancer = balancer;
    this.client = client;
    this.registry = registry;
  }

  @Override
  public Call caller(String user) {
    Request request =
        new Request.Builder().url("http://" + ScenarioRun.SERVICE + "/work").header(ScenarioRun.USER_HEADER, user).build();
    return () -> {
      try (Response r = client.newCall(request).execute()) {
        r.body().bytes();
        return new Reply(r.code(), r.header(Backend.BACKEND_HEADER));
      }
    };
  }

  @Override
  public int inFlight(int port) {
    return ScenarioRun.inFlight(balancer, port);
  }

  /** The interceptor's {@code fairway.retries} counter. */
  @Override
  public long retries() {
    return ScenarioRun.retriesCounted(registry);
  }

  /** The interceptor's {@code fairway.hedges{result=sent}} counter. */
  @Override
  public long hedgesSent() {
    return ScenarioRun.hedgesCounted(registry);
  }

  @Override
  public void close() {
    ScenarioRun.shutdown(client);
    balancer.close();
  }
}
