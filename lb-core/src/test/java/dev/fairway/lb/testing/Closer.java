package dev.fairway.lb.testing;

import java.util.ArrayList;
import java.util.List;

/** What a test opened, closed in reverse order after it (from an {@code @AfterEach}). */
public final class Closer implements AutoCloseable {
  private final List<AutoCloseable> closeables = new ArrayList<>();

  public <T extends AutoCloseable> T add(T closeable) {
    closeables.add(closeable);
    return closeable;
  }

  @Override
  public void close() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
    closeables.clear();
  }
}
