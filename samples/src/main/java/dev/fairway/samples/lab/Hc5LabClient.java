package dev.fairway.samples.lab;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.hc5.AffinityKey;
import dev.fairway.lb.hc5.FairwayHttpClient5;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.util.Timeout;

/**
 * {@code --client hc5}: a classic Apache HttpClient 5 whose exec chain {@link FairwayHttpClient5}
 * customized, over its own {@link LoadBalancer} (built by {@link ScenarioRun} as for OkHttp). Its
 * connection pool holds a connection for every user of the client and the OkHttp client's margin
 * ({@code users + 64} in all and per route, as the OkHttp client's dispatcher and pool), so a call
 * never waits for a lease; connect timeout 2 s and socket and response timeouts 60 s, as OkHttp's
 * connect and read timeouts.
 *
 * <p>With {@code --hedge}, the adapter hedges as the OkHttp interceptor does (the first copy on the
 * user's thread, the hedge from the adapter's shared hedge pool). Retries and hedges are read from
 * the adapter's meters in the balancer's registry ({@code fairway.retries}, {@code
 * fairway.hedges{result=sent}}), as for OkHttp.
 */
final class Hc5LabClient implements LabClient {
  private static final Timeout CONNECT_TIMEOUT = Timeout.ofSeconds(2);
  private static final Timeout READ_TIMEOUT = Timeout.ofSeconds(60);
  private static final String WORK = "http://" + ScenarioRun.SERVICE + "/work";

  private final LoadBalancer balancer;
  private final MeterRegistry registry;
  private final CloseableHttpClient client;

  /**
   * With {@code keyed} (the key strategies), each call's user header is its affinity key, as the
   * OkHttp client's interceptor reads it; with {@code hedging} (null: none), calls are hedged by
   * that policy. {@code registry} is the balancer's.
   */
  Hc5LabClient(LoadBalancer balancer, MeterRegistry registry, int users, int maxAttempts, boolean keyed,
      HedgingPolicy hedging) {
    this.balancer = balancer;
    this.registry = registry;
    FairwayHttpClient5.Builder builder =
        FairwayHttpClient5.builder().service(ScenarioRun.SERVICE, balancer).maxAttempts(maxAttempts);
    if (keyed) {
      builder.affinityKey(AffinityKey.header(ScenarioRun.USER_HEADER));
    }
    if (hedging != null) {
      builder.hedging(hedging);
    }
    FairwayHttpClient5 fairway = builder.build();
    this.client = fairway.customize(HttpClients.custom())
        .setConnectionManager(PoolingHttpClientConnectionManagerBuilder.create()
            .setMaxConnTotal(users + 64)
            .setMaxConnPerRoute(users + 64)
            .setDefaultConnectionConfig(
                ConnectionConfig.custom().setConnectTimeout(CONNECT_TIMEOUT).setSocketTimeout(READ_TIMEOUT).build())
            .build())
        .setDefaultRequestConfig(RequestConfig.custom().setResponseTimeout(READ_TIMEOUT).build())
        .build();
  }

  @Override
  public Call caller(String user) {
    return () -> {
      HttpGet get = new HttpGet(WORK); // a request is mutable: one per call
      get.setHeader(ScenarioRun.USER_HEADER, user);
      return client.execute(get, response -> {
        EntityUtils.consume(response.getEntity());
        Header backend = response.getFirstHeader(Backend.BACKEND_HEADER);
        return new Reply(response.getCode(), backend == null ? null : backend.getValue());
      });
    };
  }

  @Override
  public int inFlight(int port) {
    return ScenarioRun.inFlight(balancer, port);
  }

  /** The adapter's {@code fairway.retries} counter. */
  @Override
  public long retries() {
    return ScenarioRun.retriesCounted(registry);
  }

  /** The adapter's {@code fairway.hedges{result=sent}} counter. */
  @Override
  public long hedgesSent() {
    return ScenarioRun.hedgesCounted(registry);
  }

  @Override
  public void close() {
    client.close(CloseMode.IMMEDIATE);
    balancer.close();
  }
}
