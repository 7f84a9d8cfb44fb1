// Shapes shared between storage, domain and HTTP layers; they live in src/model/ so that the lower
// floors (storage, drivers) can use them without importing the domain.
export * from '../model/source';
