// Test entry point of pool (@dbproxy/pool/testing): an in-memory connection factory.
export { FakeConnection, FakeConnectionFactory, fakePool, type FakeFactoryOptions } from './fake-connection';
